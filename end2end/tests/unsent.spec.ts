// Nothing an annotator typed is lost (app/src/ui/annotate/unsent.rs): a submission that does not
// reach the server, or whose reply is lost, keeps the answer on screen, is sent again and stored
// once (its key); an answer not yet saved comes back after a reload.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, hydrated, logInOn, query, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "scifact-demo";
const SUBMIT = "**/api/work/submit";

/// Judgment rows stored for `user` on the pair, read from the demo's database.
function judgments(user: string, claim: string, doc: string): number {
  const sql =
    "SELECT COUNT(*) FROM judgment_rows j JOIN users u ON u.id = j.annotator_id " +
    "JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id " +
    `WHERE u.username = '${user}' AND c.claim_id = '${claim}' AND d.doc_id = '${doc}'`;
  return Number(query(server, sql));
}

async function workbench(browser: Browser, user: string): Promise<{ page: Page; claim: string; doc: string }> {
  const page = await (await browser.newContext()).newPage();
  await logInOn(page, server, user);
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  return { page, claim: (await item.getAttribute("data-claim")) ?? "", doc: (await item.getAttribute("data-doc")) ?? "" };
}

/// SUPPORT, the second sentence as rationale, "evidence matches", Enter.
async function answer(page: Page) {
  await page.keyboard.press("1");
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  await page.keyboard.press("m");
  await page.keyboard.press("Enter");
}

/// The answer of `answer` is on screen, on the pair `claim`/`doc`.
async function answerShown(page: Page, claim: string, doc: string) {
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toHaveAttribute("data-claim", claim);
  await expect(item).toHaveAttribute("data-doc", doc);
  await expect(page.getByTestId("label-SUPPORT")).toHaveClass(/\bon\b/);
  await expect(page.getByTestId("rationale")).toHaveText("Rationale: sentences 2");
}

async function saved(page: Page, claim: string, doc: string) {
  await expect(page.getByTestId("unsent")).toBeHidden({ timeout: 15_000 });
  const last = page.getByTestId("last-submission");
  await expect(last).toContainText(`claim ${claim} / doc ${doc}`);
  await expect(last).toContainText("you said SUPPORT");
  await expect(page.getByTestId("form-error")).toHaveCount(0);
}

test("keys pressed before the page has hydrated are not lost", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await logInOn(page, server, "ann1");
  // The front end arrives 3 s late, as on a slow connection; the item is on screen before.
  await page.route("**/*.wasm", async (route) => {
    await new Promise((done) => setTimeout(done, 3000));
    await route.continue();
  });
  await page.goto(`${server.url}/work/${PROJECT}`, { waitUntil: "commit" });
  const item = page.locator('[data-testid="item"]');
  await expect(item).toBeVisible();
  // A first pass (this file's first test: a fresh queue), whose form starts blank.
  await expect(item).toHaveAttribute("data-stage", "first");
  await expect(page.locator("body")).not.toHaveAttribute("data-hydrated", "true");
  for (const key of ["1", "j", "x", "m"]) await page.keyboard.press(key);
  await hydrated(page);
  await expect(page.getByTestId("label-SUPPORT")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("rationale")).toHaveText("Rationale: sentences 2");
  await expect(page.getByTestId("spec-matches")).toHaveAttribute("aria-pressed", "true");
});

test("a submission whose reply is lost keeps the answer, is sent again and stored once", async ({ browser }) => {
  const { page, claim, doc } = await workbench(browser, "ann1");
  // The first submission reaches the server, which stores it; its reply never comes back.
  let sent = 0;
  await page.route(SUBMIT, async (route) => {
    sent += 1;
    if (sent === 1) {
      await route.fetch();
      await route.abort("failed");
    } else {
      await route.continue();
    }
  });
  await answer(page);
  await expect(page.getByTestId("unsent")).toBeVisible();
  await answerShown(page, claim, doc);
  // Sent again by itself: the server recognises the key and stores nothing more.
  await saved(page, claim, doc);
  expect(sent).toBeGreaterThanOrEqual(2);
  expect(judgments("ann1", claim, doc)).toBe(1);
});

test("offline, the answer stays; after a reload it is back, and Enter saves it once", async ({ browser }) => {
  const { page, claim, doc } = await workbench(browser, "ann2");
  await page.context().setOffline(true);
  await answer(page);
  await expect(page.getByTestId("unsent")).toBeVisible();
  await answerShown(page, claim, doc);
  expect(judgments("ann2", claim, doc)).toBe(0);

  // The page is reloaded while submissions still fail: the answer comes back into its item.
  await page.route(SUBMIT, (route) => route.abort("failed"));
  await page.context().setOffline(false);
  await page.reload();
  await hydrated(page);
  await answerShown(page, claim, doc);
  await expect(page.getByRole("status").filter({ hasText: "from before the reload" })).toBeVisible();
  expect(judgments("ann2", claim, doc)).toBe(0);

  await page.unroute(SUBMIT);
  await page.keyboard.press("Enter");
  await saved(page, claim, doc);
  expect(judgments("ann2", claim, doc)).toBe(1);
});

test("undo brings the answer back; Undo is offered only while it can work", async ({ browser }) => {
  const context = await browser.newContext();
  // The page's clock, to pass the undo window without waiting a minute (the server's is real).
  await context.clock.install();
  const page = await context.newPage();
  await logInOn(page, server, "ann3");
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  const [claim, doc] = [(await item.getAttribute("data-claim")) ?? "", (await item.getAttribute("data-doc")) ?? ""];
  await answer(page);
  await saved(page, claim, doc);

  // Undo: the item is back with the answer it had, label, sentence and specificity.
  await expect(page.getByTestId("undo")).toBeVisible();
  await page.keyboard.press("u");
  await expect(page.getByRole("status").filter({ hasText: "Undone" })).toBeVisible();
  await answerShown(page, claim, doc);
  await expect(page.getByTestId("spec-matches")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("label-SUPPORT")).toHaveAttribute("aria-pressed", "true");
  await page.keyboard.press("Enter");
  await saved(page, claim, doc);
  // Two rows: the one undone (retracted) and the one saved again.
  expect(judgments("ann3", claim, doc)).toBe(2);

  // The window passes: Undo shows the seconds left, counting down; then it is no longer
  // offered, and u says why instead of failing.
  const undo = page.getByTestId("undo");
  await expect(undo).toHaveText(/^Undo \(u\) · (59|60) s left$/);
  await page.clock.fastForward(10_000);
  await expect(undo).toHaveText(/^Undo \(u\) · (49|50) s left$/);
  await page.clock.fastForward(51_000);
  await expect(page.getByTestId("undo")).toHaveCount(0);
  await expect(page.getByTestId("no-undo")).toContainText("have passed");
  await page.keyboard.press("u");
  await expect(page.getByRole("status").filter({ hasText: "Nothing to undo" })).toBeVisible();
  await expect(page.getByTestId("form-error")).toHaveCount(0);
  expect(judgments("ann3", claim, doc)).toBe(2);
});
