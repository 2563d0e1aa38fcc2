// Finding F1 of the 2026-11 audit: a page's <title> names the project or a path segment, and the
// server wrote it unescaped. A project named to close the title and add a meta refresh (stored),
// and a claim path doing the same (reflected), must leave the browser where it is, with the
// markup shown as text in the title after hydration.
import { test, expect, Page, Browser } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { startDemo, logInOn, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const CRAFTED = `p</title><meta http-equiv=refresh content="0;url=//evil.example">`;

function cli(args: string[]): string {
  return execFileSync(server.bin, ["--db", server.db, ...args], { encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
}

/// A page of `user`, logged in, with every request off this server counted and refused.
async function logIn(browser: Browser, user: string, away: string[]): Promise<Page> {
  const context = await browser.newContext();
  const origin = new URL(server.url).origin;
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:")) return route.continue();
    away.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("pageerror", (e) => {
    throw e;
  });
  await logInOn(page, server, user);
  return page;
}

async function staysHere(page: Page, path: string, title: string, away: string[]) {
  await page.goto(`${server.url}${path}`);
  await expect(page.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  // A meta refresh with content=0 fires at once; give it time to show itself.
  await page.waitForTimeout(1500);
  expect(away).toEqual([]);
  expect(page.url()).toBe(`${server.url}${path}`);
  await expect(page).toHaveTitle(title);
}

test("a crafted project name and claim path never navigate away", async ({ browser }) => {
  // Stored: a project named to end the title, made from the shell beside the running server,
  // led by `lead` and opened by the admin too.
  cli(["project", "create", CRAFTED]);
  cli(["project", "member", "add", "--project", CRAFTED, "--user", "lead", "--role", "lead"]);
  const encoded = encodeURIComponent(CRAFTED);
  for (const user of ["admin", "lead"]) {
    const away: string[] = [];
    const page = await logIn(browser, user, away);
    await staysHere(page, `/lead/projects/${encoded}`, `${CRAFTED} · claimpool`, away);
    await staysHere(page, `/lead/projects/${encoded}/report`, `Report · ${CRAFTED} · claimpool`, away);
  }
  // Reflected: a claim path of the demo project.
  const away: string[] = [];
  const lead = await logIn(browser, "lead", away);
  const claim = encodeURIComponent("</title><meta http-equiv=refresh content=0;url=//evil.example>");
  await staysHere(lead, `/lead/projects/scifact-demo/claims/${claim}`, `Claim </title><meta http-equiv=refresh content=0;url=//evil.example> · claimpool`, away);
});
