// The release smoke test: what `make demo` serves, in a browser. Every page must hydrate (the wasm
// loads and takes over: `<body data-hydrated>`, set by an effect, which only runs in the browser),
// an interaction that needs the wasm must work on it, and no page may throw. An annotator labels
// one item with the keyboard only; the lead opens the project, annotation and report pages.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, hydrated, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "scifact-demo";

// Errors thrown in the page (a panic in the wasm, a failed instantiation) and console errors.
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  return errors;
}


// Follows an in-app link and checks that the router handled it in the page (no full load): only
// a hydrated page keeps `window.__spa` across a navigation.
async function clientNavigation(page: Page, link: string, url: RegExp) {
  await page.evaluate(() => ((window as any).__spa = true));
  await page.getByRole("link", { name: link, exact: true }).first().click();
  await expect(page).toHaveURL(url);
  expect(await page.evaluate(() => (window as any).__spa === true)).toBe(true);
  await hydrated(page);
}

async function login(browser: Browser, user: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/login`);
  await hydrated(page);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(`${user}-demo`);
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  await hydrated(page);
  return { page, errors };
}

test("an annotator labels one item with the keyboard", async ({ browser }) => {
  const { page, errors } = await login(browser, "ann1");
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  await expect(item).toHaveAttribute("data-stage", "first");
  const claim = await item.getAttribute("data-claim");
  const doc = await item.getAttribute("data-doc");

  // SUPPORT, the second sentence as rationale, "evidence matches", Enter.
  await page.keyboard.press("1");
  await expect(page.getByTestId("label-SUPPORT")).toHaveClass(/\bon\b/);
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  await expect(page.getByTestId("rationale")).toHaveText("Rationale: sentences 2");
  await page.keyboard.press("m");
  await page.keyboard.press("Enter");

  const last = page.getByTestId("last-submission");
  await expect(last).toContainText(`claim ${claim} / doc ${doc}`);
  await expect(last).toContainText("you said SUPPORT");
  // The next item is a different pair, ready for the keyboard.
  await expect(item).toBeVisible();
  expect(`${await item.getAttribute("data-claim")}/${await item.getAttribute("data-doc")}`).not.toBe(`${claim}/${doc}`);

  // The submission is stored: a fresh load of the queue counts it as done.
  await page.reload();
  await hydrated(page);
  await expect(page.getByText(/^1 done · \d+ open$/)).toBeVisible();
  await clientNavigation(page, "Home", new RegExp(`${server.url}/$`));
  expect(errors).toEqual([]);
});

test("the lead's pages hydrate and respond", async ({ browser }) => {
  const { page, errors } = await login(browser, "lead");

  await clientNavigation(page, "Projects", /\/lead$/);
  await clientNavigation(page, PROJECT, new RegExp(`/lead/projects/${PROJECT}$`));
  await expect(page.getByTestId("project-counts")).toContainText("443");
  // The pool preview is a server action: its result appears only through the wasm.
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByTestId("preview")).toBeVisible();

  await page.goto(`${server.url}/lead/projects/${PROJECT}/annotation`);
  await hydrated(page);
  await page.getByRole("button", { name: "List open items to reassign" }).click();
  await expect(page.getByTestId("open-items")).toBeVisible();

  await page.goto(`${server.url}/lead/projects/${PROJECT}/report`);
  await hydrated(page);
  await expect(page.getByTestId("report-summary")).toContainText("Pool at depth 30");
  await expect(page.getByTestId("system-scores")).toBeVisible();
  await clientNavigation(page, `← ${PROJECT}`, new RegExp(`/lead/projects/${PROJECT}$`));

  await page.goto(`${server.url}/lead/projects/${PROJECT}/releases`);
  await hydrated(page);
  await expect(page.getByTestId("release-state")).toBeVisible();
  expect(errors).toEqual([]);
});

test("the admin's user list hydrates", async ({ browser }) => {
  const { page, errors } = await login(browser, "admin");
  await clientNavigation(page, "Users", /\/admin\/users$/);
  await expect(page.getByRole("cell", { name: "ann3" })).toBeVisible();
  expect(errors).toEqual([]);
});
