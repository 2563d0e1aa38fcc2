// An annotator's own judgments (app/src/ui/history.rs): the page lists what they answered, filters
// it, and undoes the last one inside its window; the item comes back with the answer filled in.
import { test, expect } from "@playwright/test";
import { startDemo, hydrated, logInOn, violations, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const PROJECT = "scifact-demo";

test("the history lists one's answers, filters them and undoes the last", async ({ browser }) => {
  const page = await (await browser.newContext()).newPage();
  await logInOn(page, server, "ann2");
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  const claim = (await item.getAttribute("data-claim")) ?? "";
  const doc = (await item.getAttribute("data-doc")) ?? "";
  // SUPPORT with the second sentence as rationale.
  for (const key of ["1", "j", "x", "m", "Enter"]) await page.keyboard.press(key);
  await expect(page.getByTestId("last-submission")).toContainText(`claim ${claim} / doc ${doc}`);

  await page.getByTestId("history-link").click();
  await hydrated(page);
  const rows = page.getByTestId("history-row");
  await expect(rows.first()).toContainText(`doc ${doc}`);
  await expect(rows.first()).toContainText("SUPPORT");
  await expect(rows.first()).toContainText("first pass");
  expect(await violations(page), "axe-core on the history page").toEqual([]);
  const all = await rows.count();

  // Filtered to NEI: this answer is not among them.
  await page.getByLabel("Label").selectOption("NEI");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("history-summary")).not.toContainText(`${all} judgments`);
  for (const row of await rows.all()) await expect(row).toContainText("NEI");
  await page.getByLabel("Label").selectOption("");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(rows).toHaveCount(all);

  // Undo, with the seconds left shown, brings the item back with the answer in the form.
  const undo = page.getByTestId("history-undo");
  await expect(undo).toHaveText(/Undo \(\d+ s left\)/);
  await undo.click();
  await expect(page.getByTestId("history-message")).toContainText("Undone");
  await expect(rows).toHaveCount(all - 1);
  await expect(page.getByTestId("history-undo")).toHaveCount(0);
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  await expect(item).toHaveAttribute("data-doc", doc);
  await expect(page.getByTestId("label-SUPPORT")).toHaveClass(/\bon\b/);
  await expect(page.getByTestId("rationale")).toHaveText("Rationale: sentences 2");
});
