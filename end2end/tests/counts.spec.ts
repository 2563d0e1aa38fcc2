// The lead's counts agree across pages (issue 39): the annotation page, the releases page and the
// pool (its summary and a preview at the pool's own depth) give the demo project's pooled pairs
// and the pooled pairs with a final label alike, and equal what the database holds, before and
// after a round of judgments.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, hydrated, logInOn, query, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const PROJECT = "scifact-demo";
const LP = `/lead/projects/${PROJECT}`;

async function page(browser: Browser, user: string): Promise<Page> {
  const p = await (await browser.newContext()).newPage();
  await logInOn(p, server, user);
  return p;
}

/// The value of the stat labelled `label` on the page (a number without separators).
async function stat(p: Page, label: string): Promise<number> {
  const box = p.locator(".stat", { has: p.locator(".stat-label", { hasText: new RegExp(`^${label}$`) }) });
  await expect(box).toHaveCount(1);
  return Number((await box.locator(".stat-value").innerText()).replace(/[^0-9]/g, ""));
}

interface Counts {
  pooled: number;
  final: number;
}

/// The counts as each page gives them; each page must agree with the database.
async function everyPage(lead: Page): Promise<Counts> {
  const db: Counts = {
    pooled: Number(query(server, "SELECT COUNT(*) FROM pool_entries")),
    final: Number(
      query(
        server,
        "SELECT COUNT(*) FROM pool_entries e WHERE EXISTS " +
          "(SELECT 1 FROM final_labels f WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id)",
      ),
    ),
  };
  const finalLabels = Number(query(server, "SELECT COUNT(*) FROM final_labels"));

  await lead.goto(`${server.url}${LP}/annotation`);
  await hydrated(lead);
  expect(await stat(lead, "pooled pairs"), "annotation page").toBe(db.pooled);
  expect(await stat(lead, "pooled pairs with a final label"), "annotation page").toBe(db.final);

  await lead.goto(`${server.url}${LP}/releases`);
  await hydrated(lead);
  expect(await stat(lead, "pooled pairs"), "releases page").toBe(db.pooled);
  expect(await stat(lead, "pooled pairs with a final label"), "releases page").toBe(db.final);
  expect(await stat(lead, "pooled pairs without one"), "releases page").toBe(db.pooled - db.final);
  expect(await stat(lead, "final labels outside the pool"), "releases page").toBe(finalLabels - db.final);

  await lead.goto(`${server.url}${LP}`);
  await hydrated(lead);
  const depth = Number(query(server, "SELECT depth FROM pool_builds ORDER BY id DESC LIMIT 1"));
  await expect(lead.getByTestId("pool-summary")).toContainText(
    new RegExp(`^${db.pooled} pairs pooled \\(confidence strategy, depth ${depth}\\); ${db.final} judged,`),
  );
  await lead.getByTestId("pool-depth").fill(String(depth));
  await lead.getByRole("button", { name: "Preview", exact: true }).click();
  // At the pool's own depth a build adds nothing: the pool stays as it is.
  const row = lead.getByTestId("preview").locator("tbody tr").first().locator("td");
  await expect(row.nth(0)).toHaveText(String(depth));
  await expect(row.nth(1)).toHaveText(String(db.pooled));
  await expect(row.nth(2)).toHaveText("0");
  await expect(row.nth(3)).toHaveText("0");
  return db;
}

test("the annotation page, the releases page and the pool agree, before and after judgments", async ({ browser }) => {
  const lead = await page(browser, "lead");
  const before = await everyPage(lead);
  expect(before.pooled).toBeGreaterThan(before.final);

  // A round of judgments: two annotators each call two items "clearly no evidence" (final NEI).
  for (const user of ["ann1", "ann2"]) {
    const ann = await page(browser, user);
    await ann.goto(`${server.url}/work/${PROJECT}`);
    await hydrated(ann);
    for (let i = 0; i < 2; i++) {
      const item = ann.locator('[data-testid="item"][data-ready="true"][data-stage="first"]');
      await expect(item).toBeVisible();
      const doc = await item.getAttribute("data-doc");
      await ann.keyboard.press("0");
      await ann.keyboard.press("Enter");
      await expect(ann.getByTestId("last-submission")).toContainText(`doc ${doc} — you said NEI`);
    }
  }
  const after = await everyPage(lead);
  expect(after).toEqual({ pooled: before.pooled, final: before.final + 4 });
});
