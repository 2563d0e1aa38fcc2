// Every page as a newcomer sees it, at 1280×800 and 1920×1080, and at 1280×800 in the dark
// theme (the system's prefers-color-scheme): it hydrates, throws nothing, no
// box is wider than its content allows (a form running past its card, a page scrolling sideways),
// and axe-core finds no accessibility violation (WCAG 2.1 A and AA rules and its best practices).
// Screenshots of each land in end2end/screens/ for a person to look at.
import { test, expect, Page, Browser } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startDemo, query, violations, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "scifact-demo";
type Look = { width: number; height: number; scheme: "light" | "dark" };
const SIZES: Look[] = [
  { width: 1280, height: 800, scheme: "light" },
  { width: 1920, height: 1080, scheme: "light" },
  { width: 1280, height: 800, scheme: "dark" },
];
const look = (size: Look) => `${size.width} px${size.scheme === "dark" ? ", dark" : ""}`;
const context = (browser: Browser, size: Look) =>
  browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: size.scheme });
const SCREENS = join(__dirname, "..", "screens");

async function login(browser: Browser, user: string, size: Look) {
  const page = await (await context(browser, size)).newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(`${user}-demo`);
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  return { page, errors };
}

// Boxes whose content is wider than the box: the page itself, and every card, section and form
// (tables that are meant to scroll sit in `.scroll`, which is left out).
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const doc = document.scrollingElement!;
    if (doc.scrollWidth > doc.clientWidth + 1) found.push(`page ${doc.scrollWidth} > ${doc.clientWidth}`);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>("main .card, main section, main form, main figure"))) {
      if (el.closest(".scroll")) continue;
      if (el.scrollWidth > el.clientWidth + 1) {
        const id = el.getAttribute("data-testid") ?? el.id ?? "";
        found.push(`${el.tagName.toLowerCase()}.${el.className}${id ? "#" + id : ""}: ${el.scrollWidth} > ${el.clientWidth}`);
      }
    }
    return found;
  });
}

async function check(page: Page, errors: string[], path: string, name: string, size: Look) {
  errors.length = 0;
  const res = await page.goto(`${server.url}${path}`);
  if (name === "not-found") {
    // The page itself answers 404, which the console reports; nothing else may fail.
    expect(res?.status()).toBe(404);
  }
  await expect(page.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  await page.waitForLoadState("networkidle");
  mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: join(SCREENS, `${name}-${size.width}-${size.scheme}.png`), fullPage: true });
  expect.soft(await overflowing(page), `${path} at ${look(size)}`).toEqual([]);
  expect.soft(await violations(page), `axe-core on ${path} at ${look(size)}`).toEqual([]);
  const unexpected = errors.filter((e) => !(name === "not-found" && /status of 404/.test(e)));
  expect.soft(unexpected, `${path} at ${look(size)}`).toEqual([]);
}

for (const size of SIZES) {
  test(`every page at ${size.width}×${size.height}, ${size.scheme}`, async ({ browser }) => {
    const anon = await (await context(browser, size)).newPage();
    await anon.goto(`${server.url}/login`);
    await expect(anon.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
    await anon.screenshot({ path: join(SCREENS, `login-${size.width}-${size.scheme}.png`) });
    expect.soft(await violations(anon), `axe-core on /login at ${look(size)}`).toEqual([]);

    const lead = await login(browser, "lead", size);
    const lp = `/lead/projects/${PROJECT}`;
    await check(lead.page, lead.errors, "/", "lead-home", size);
    await check(lead.page, lead.errors, "/lead", "projects", size);
    await check(lead.page, lead.errors, lp, "project", size);
    const claim = await lead.page.getByTestId("claims").locator("a").first().getAttribute("href");
    expect(claim).toBeTruthy();
    await check(lead.page, lead.errors, claim!, "claim", size);
    await check(lead.page, lead.errors, `${lp}/annotation`, "annotation", size);
    await check(lead.page, lead.errors, `${lp}/gold`, "gold", size);
    await check(lead.page, lead.errors, `${lp}/report`, "report", size);
    await check(lead.page, lead.errors, `${lp}/releases`, "releases", size);
    await check(lead.page, lead.errors, `${lp}/releases/diff`, "release-diff", size);
    await check(lead.page, lead.errors, `${lp}/webhooks`, "webhooks", size);
    const entry = query(server, "SELECT MIN(id) FROM pool_entries");
    await check(lead.page, lead.errors, `${lp}/adjudicate/${entry}`, "adjudicate", size);
    await check(lead.page, lead.errors, "/no/such/page", "not-found", size);

    const admin = await login(browser, "admin", size);
    await check(admin.page, admin.errors, "/admin/users", "users", size);

    const ann = await login(browser, "ann2", size);
    await check(ann.page, ann.errors, "/", "annotator-home", size);
    await check(ann.page, ann.errors, `/work/${PROJECT}`, "work", size);
    await check(ann.page, ann.errors, `/work/${PROJECT}/history`, "history", size);
    await check(ann.page, ann.errors, "/account", "account", size);
  });
}
