// The lead report on real data (skipped when ../shared/data is absent): SciFact dev claims —
// the even claims with their citation evidence, the odd ones without — and three staged
// third-party runs, pooled at depth 50 through the CLI; a lead's final judgments give the odd
// claims' pooled pairs their gold labels. The page must show the evidence the pool discovered,
// counted here from the pool list and the gold file, and the same figures as the CLI's JSON.
import { test, expect } from "@playwright/test";
import { execFileSync, spawn, ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const DATA = process.env.CLAIMPOOL_SHARED_DATA ?? resolve(__dirname, "../../../shared/data");
const BIN = process.env.CLAIMPOOL_BIN ?? resolve(__dirname, "../../target/debug/claimpool");
const PROJECT = "scifact-dev";
const DEPTH = 50;
const RUNS: [string, string, string, string][] = [
  ["mv-citint", "multivers_jedick/dev/citint_scifact_dev.jsonl", "leaderboard", "REFUTE,NEI,SUPPORT"],
  ["arsjoint", "arsjoint/2021-03-27_21c6c29/label_predictions.jsonl", "verisci", "CONTRADICT,NEI,SUPPORT"],
  ["hybrid-6d32", "hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl", "leaderboard", "CONTRADICT,NEI,SUPPORT"],
];
const present =
  existsSync(join(DATA, "scifact/claims_dev.jsonl")) &&
  RUNS.every(([, file]) => existsSync(join(DATA, "scifact-runs", file)));

interface PoolRow {
  claim_id: string;
  doc_id: string;
  entry_depth: number;
  final_label: string | null;
}

let server: ChildProcess | undefined;
let url = "";
let db = "";
const gold = new Map<string, string>(); // "claim/doc" → SUPPORT | CONTRADICT
const odd = (id: number) => id % 2 === 1;

function cli(args: string[], input?: string): string {
  return execFileSync(BIN, ["--db", db, ...args], { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
}

test.beforeAll(async () => {
  test.skip(!present, `no SciFact data at ${DATA}`);
  const dir = mkdtempSync(join(tmpdir(), "claimpool-e2e-scifact-"));
  db = join(dir, "scifact.db");
  const claims = readFileSync(join(DATA, "scifact/claims_dev.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const visible: string[] = [];
  for (const claim of claims) {
    for (const [doc, sets] of Object.entries(claim.evidence as Record<string, { label: string }[]>)) {
      gold.set(`${claim.id}/${doc}`, sets[0].label === "SUPPORT" ? "SUPPORT" : "CONTRADICT");
    }
    if (odd(claim.id)) {
      visible.push(JSON.stringify({ ...claim, evidence: {}, cited_doc_ids: [] }));
    } else {
      visible.push(JSON.stringify(claim));
    }
  }
  writeFileSync(join(dir, "claims.jsonl"), visible.join("\n") + "\n");

  cli(["user", "add", "--username", "lead", "--role", "lead", "--password-stdin"], "lead-scifact\n");
  cli(["project", "create", PROJECT]);
  cli(["project", "member", "add", "--project", PROJECT, "--user", "lead", "--role", "lead"]);
  cli(["import", "corpus", "--project", PROJECT, join(DATA, "scifact/corpus.jsonl")]);
  cli(["import", "claims", "--project", PROJECT, join(dir, "claims.jsonl")]);
  for (const [name, file, format, order] of RUNS) {
    cli(["import", "run", "--project", PROJECT, "--system", name, "--role", "pooled", "--format", format,
      "--label-order", order, join(DATA, "scifact-runs", file)]);
  }
  cli(["pool", "build", "--project", PROJECT, "--depth", String(DEPTH)]);
  // The lead's final labels for the odd claims' pooled pairs: gold evidence as SUPPORT /
  // CONTRADICT, the others NEI.
  const pooled: PoolRow[] = JSON.parse(cli(["pool", "list", "--project", PROJECT, "--json"]));
  const qrels = pooled
    .filter((r) => odd(Number(r.claim_id)))
    .map((r) => `${r.claim_id} 0 ${r.doc_id} ${gold.get(`${r.claim_id}/${r.doc_id}`) ?? "NEI"}`);
  writeFileSync(join(dir, "odd.qrels"), qrels.join("\n") + "\n");
  cli(["import", "judgments", "--project", PROJECT, "--annotator", "lead", "--stage", "final", "--format", "qrels-labels",
    join(dir, "odd.qrels")]);

  server = spawn(BIN, ["--db", db, "serve", "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  url = await new Promise<string>((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`serve did not start in 60 s:\n${out}`)), 60_000);
    server!.stdout?.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/serving on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    server!.on("exit", (code) => fail(new Error(`serve exited with ${code}:\n${out}`)));
  });
});
test.afterAll(() => server?.kill("SIGTERM"));

test("the report of a pooled and judged SciFact dev project shows the discovered evidence", async ({ page }) => {
  // Counted here: pooled pairs of the odd claims that are gold evidence, by entry depth.
  const pool: PoolRow[] = JSON.parse(cli(["pool", "list", "--project", PROJECT, "--json"]));
  const discoveredBy = (depth: number) =>
    pool.filter((r) => odd(Number(r.claim_id)) && r.entry_depth <= depth && gold.has(`${r.claim_id}/${r.doc_id}`)).length;
  const discovered = discoveredBy(DEPTH);
  expect(discovered).toBeGreaterThan(10);
  const citation = [...gold.keys()].filter((k) => !odd(Number(k.split("/")[0]))).length;
  const json = JSON.parse(cli(["report", "--project", PROJECT, "--step", "25", "--json"]));

  await page.goto(`${url}/login`);
  await page.getByLabel("User name").fill("lead");
  await page.getByLabel("Password").fill("lead-scifact");
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  await page.goto(`${url}/lead/projects/${PROJECT}/report`);
  const summary = page.getByTestId("report-summary");
  await expect(summary).toContainText(`Pool at depth ${DEPTH} (confidence strategy)`);
  await expect(summary).toContainText(`${citation + discovered} pairs (${citation} citation, ${discovered} discovered by the pool)`);

  // The depth table: evidence discovered at 25 and 50, as counted here; F1 as the CLI says.
  await page.getByText("Depth curve as a table").click();
  const rows = page.getByTestId("depth-table").locator("tbody tr");
  for (const [i, depth] of [25, 50].entries()) {
    const row = rows.filter({ has: page.locator(`td:first-child:text-is("${depth}")`) }).first();
    await expect(row.locator("td").nth(3)).toHaveText(String(discoveredBy(depth)));
    expect(json.depth_curve[i].evidence).toBe(discoveredBy(depth));
  }
  // Each system's F1 at full depth, in the system scores table, equals the CLI's.
  const scores = page.getByTestId("system-scores");
  for (const [name] of RUNS) {
    const f1 = json.depth_curve[1].systems[name].f1 as number;
    await expect(scores.locator("tr", { has: page.locator(`td:text-is("${name}")`) })).toContainText(f1.toFixed(3));
  }
  // The plots carry one line per system.
  await expect(page.getByTestId("plot-depth-f1").locator("polyline")).toHaveCount(RUNS.length);
});
