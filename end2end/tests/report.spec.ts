import { test, expect } from "@playwright/test";
import { startDemo, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

test("a lead opens the report of the demo project: SVG plots, tables, CSV downloads, print", async ({ page }) => {
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill("lead");
  await page.getByLabel("Password").fill("lead-demo");
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();

  // From the project page to its report.
  await page.goto(`${server.url}/lead/projects/scifact-demo`);
  await page.getByTestId("report-link").click();
  await expect(page).toHaveURL(/\/lead\/projects\/scifact-demo\/report$/);
  await expect(page.getByTestId("report-summary")).toContainText("Pool at depth 30 (confidence strategy)");

  // Before any pooled pair has a final label, the evidence plots say what will appear and when
  // instead of drawing a flat line at zero.
  for (const id of ["plot-depth-evidence", "plot-count-evidence"]) {
    await expect(page.getByTestId(id)).toHaveCount(0);
    await expect(page.locator(`[data-empty-plot="${id}"]`)).toContainText("Nothing to plot yet: no pooled pair has a final label.");
  }
  // The plots are inline SVG with axes, a legend and values on hover.
  for (const id of [
    "plot-depth-f1",
    "plot-depth-ap",
    "plot-depth-f1-change",
    "plot-count-f1",
    "plot-evidence-per-claim",
  ]) {
    const plot = page.getByTestId(id);
    await expect(plot).toBeVisible();
    expect(await plot.evaluate((el) => el.namespaceURI)).toBe("http://www.w3.org/2000/svg");
    await expect(plot.locator("g.axes text.axis-label")).toHaveCount(2);
  }
  const f1 = page.getByTestId("plot-depth-f1");
  // The demo pools three systems: one line each, named in the legend.
  const systems = ["bm25", "trained-r0", "trained-r20"];
  await expect(f1.locator("polyline")).toHaveCount(systems.length);
  await expect(f1.locator(".legend-entry text")).toHaveText(systems);
  // Without a step in the URL, the pool's depth (30) chooses one (5): one point per system and
  // depth 5, 10, ..., 30, each with its values in an SVG <title>.
  await expect(f1.locator("path.marker title")).toHaveCount(6 * systems.length);
  await expect(f1.locator("path.marker title").first()).toContainText(/bm25: depth 5, F1 \d/);
  const bars = page.getByTestId("plot-evidence-per-claim").locator("g.bar rect");
  expect(await bars.count()).toBeGreaterThan(1);
  await expect(page.getByTestId("plot-evidence-per-claim").locator("g.bar title").first()).toContainText("evidence pairs 0: claims");

  // Judging orders: one line per order, and a table of evidence found by judgments spent.
  const judging = page.getByTestId("plot-judging");
  await expect(judging).toBeVisible();
  await expect(judging.locator(".legend-entry text")).toHaveText(["depth", "mtf", "mab-maxmean", "mab-thompson", "hedge"]);
  await expect(page.getByTestId("judging-table").locator("tbody tr")).toHaveCount(5);

  // Tables.
  await expect(page.getByTestId("system-scores")).toContainText("bm25");
  await expect(page.getByTestId("system-scores")).toContainText("±");
  await expect(page.getByTestId("inclusion")).toContainText("bm25");
  await expect(page.getByTestId("confusion-bm25")).toBeVisible();
  await expect(page.getByTestId("specificity")).toContainText("The evidence matches the claim");
  await expect(page.getByTestId("progress")).toContainText("first");
  await expect(page.getByTestId("agreement-summary")).toContainText("No pair has both passes yet");

  // Every CSV link downloads the table with the page's options.
  const links = page.locator("a.csv");
  expect(await links.count()).toBeGreaterThanOrEqual(14);
  const href = await page.locator("#depth a.csv").first().getAttribute("href");
  expect(href).toBe("/lead/projects/scifact-demo/report/csv/depth_curve?step=5&bootstrap=1000&seed=0");
  const csv = await page.request.get(`${server.url}${href}`);
  expect(csv.status()).toBe(200);
  const lines = (await csv.text()).trim().split("\n");
  expect(lines[0]).toBe("depth,pool_size,judged,evidence,system,precision,recall,f1,average_precision,f1_change_pct,average_precision_change_pct");
  expect([...new Set(lines.map((l) => l.split(",")[0]).slice(1))]).toEqual(["5", "10", "15", "20", "25", "30"]);
  expect(lines.length).toBe(1 + 6 * systems.length);

  // The depth table shows the same numbers as the CSV.
  await page.getByText("Depth curve as a table").click();
  const first = lines[1].split(",");
  const row = page.getByTestId("depth-table").locator("tbody tr").first();
  await expect(row.locator("td").nth(0)).toHaveText(first[0]);
  await expect(row.locator("td").nth(1)).toHaveText(first[1]);
  await expect(row.locator("td").nth(3)).toHaveText(first[3]);
  await expect(row.locator("td").nth(4)).toHaveText(Number(first[7]).toFixed(3));

  // A finer depth step, from the keyboard.
  await page.getByLabel("Depth step").fill("10");
  await page.getByLabel("Depth step").press("Enter");
  await expect(page).toHaveURL(/step=10/);
  await expect(page.getByTestId("plot-depth-f1").locator("path.marker title")).toHaveCount(3 * systems.length);

  // Print: no navigation or controls, black text on white.
  await page.emulateMedia({ media: "print" });
  await expect(page.locator("header.topbar")).toBeHidden();
  await expect(page.locator("nav.toc")).toBeHidden();
  await expect(page.locator("a.csv").first()).toBeHidden();
  const colours = await page.evaluate(() => {
    const s = getComputedStyle(document.body);
    return [s.color, s.backgroundColor];
  });
  expect(colours[0]).toBe("rgb(0, 0, 0)");
  expect(colours[1]).toBe("rgb(255, 255, 255)");
});
