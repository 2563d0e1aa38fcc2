import { test, expect } from "@playwright/test";
import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startDemo, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

// A canonical run over the demo sample: for each claim, its cited documents and two others.
function writeRuns(): { good: string; bad: string } {
  const dir = mkdtempSync(join(tmpdir(), "claimpool-runs-"));
  const claims = readFileSync(resolve(__dirname, "../../server/demo/claims.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const docs = readFileSync(resolve(__dirname, "../../server/demo/corpus.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).doc_id);
  const lines: string[] = [];
  claims.forEach((c, i) => {
    const picks = [...c.cited_doc_ids, docs[(i * 7) % docs.length], docs[(i * 13 + 5) % docs.length]];
    [...new Set(picks)].forEach((d, r) => {
      const ps = ((i * 31 + r * 17) % 100) / 100;
      lines.push(JSON.stringify({ claim_id: c.id, doc_id: d, predicted_label: ps > 0.5 ? "SUPPORT" : "NEI", p_support: ps, p_contradict: 0, rank: r + 1 }));
    });
  });
  const good = join(dir, "system-a.jsonl");
  writeFileSync(good, lines.join("\n") + "\n");
  const bad = join(dir, "broken.jsonl");
  const broken = [...lines.slice(0, 3), lines[0].replace(/"p_support":[0-9.]+/, '"p_support":1.7'), '{"claim_id": 999999, "doc_id": 1}'];
  writeFileSync(bad, broken.join("\n") + "\n");
  return { good, bad };
}

test("a lead uploads runs as import jobs, previews and builds the pool", async ({ page }) => {
  const runs = writeRuns();
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill("lead");
  await page.getByLabel("Password").fill("lead-demo");
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  await page.goto(`${server.url}/lead/projects/scifact-demo`);
  await expect(page.getByTestId("project-counts")).toContainText("443");

  // Uploads become import jobs. A broken file: the job fails listing every problem with its
  // line and field; nothing imported.
  await page.getByText("Import data", { exact: true }).click();
  await page.getByTestId("import-kind").selectOption("run");
  await page.getByLabel("File (plain or .gz)").setInputFiles(runs.bad);
  await page.getByLabel("System name", { exact: true }).fill("broken");
  await page.getByTestId("import-submit").click();
  await expect(page.getByTestId("import-queued")).toContainText("imports the run from broken.jsonl");
  const failed = page.getByTestId("job").filter({ hasText: "run from broken.jsonl" });
  await expect(failed).toHaveAttribute("data-status", "failed");
  const problems = failed.getByTestId("job-problems");
  await expect(problems).toContainText("nothing was imported");
  await expect(problems).toContainText('broken.jsonl:4: field "p_support"');
  await expect(problems).toContainText("broken.jsonl:5");
  await expect(page.getByTestId("systems")).not.toContainText("broken");

  // A good file: its job ends done, and the systems table shows the new system.
  await page.getByLabel("File (plain or .gz)").setInputFiles(runs.good);
  await page.getByLabel("System name", { exact: true }).fill("system-a");
  await page.getByTestId("import-submit").click();
  const done = page.getByTestId("job").filter({ hasText: "run from system-a.jsonl" });
  await expect(done).toHaveAttribute("data-status", "done");
  await expect(done).toContainText("1 system");
  await expect(done).toContainText("lead");
  await expect(page.getByTestId("systems")).toContainText("system-a");

  // The demo's pool (BM25, depth 30) is shown; preview and grow it to depth 40 with system-a.
  await expect(page.getByTestId("pool-summary")).toContainText("depth 30");
  await page.getByTestId("pool-depth").fill("40");
  await page.getByRole("button", { name: "Preview" }).click();
  const preview = page.getByTestId("preview");
  await expect(preview.locator("tbody tr")).toHaveCount(5);
  await expect(preview.locator("tbody tr").first().locator("td").first()).toHaveText("40");
  const expected = await preview.locator("tbody tr").first().locator("td").nth(1).innerText();
  await page.getByTestId("pool-build").click();
  await expect(page.getByTestId("build-result")).toContainText(`Pool at depth 40 (confidence): ${expected} pairs`);
  await expect(page.getByTestId("pool-summary")).toContainText(`${expected} pairs pooled`);
  await expect(page.getByTestId("per-system")).toContainText("system-a");
});
