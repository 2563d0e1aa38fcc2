// A whole campaign in the browser, with no command line (issue 14): on a fresh server the admin
// creates a lead and two annotators; the lead creates a project, uploads the SciFact sample corpus,
// its claims and two system runs as import jobs (their progress shown in the Jobs table), adds the
// annotators, writes guidelines and builds the pool; the annotators confirm the guidelines and
// label every item of their queues (first passes, second passes, one disagreement); the lead
// adjudicates the disagreement, makes a release and downloads its archive.
import { test, expect, Page, Browser } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startDemo, hydrated, logInOn, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "campaign";
const LEAD = "campaign-lead";
const ANNOTATORS = ["cann1", "cann2"];
const SAMPLE = resolve(__dirname, "../../server/demo");

/** A pair with its gold evidence in the sample: the label and the first rationale sentence. */
interface Gold {
  label: "SUPPORT" | "CONTRADICT";
  sentence: number;
}

interface Files {
  corpus: string;
  claims: string;
  runs: { system: string; path: string }[];
  /** `claim/doc` → gold evidence; the other pooled pairs are not evidence. */
  gold: Map<string, Gold>;
  /** Every pair of the two runs (the pool at a depth covering both runs). */
  pairs: number;
}

// The sample's claims without evidence and citations (so that no pooled pair comes pre-labelled:
// the annotators label them all), and two small canonical runs: for five claims with evidence,
// each system ranks the evidence document first and one other document of its own.
function writeFiles(): Files {
  const dir = mkdtempSync(join(tmpdir(), "claimpool-campaign-"));
  const claimLines = readFileSync(join(SAMPLE, "claims.jsonl"), "utf8").trim().split("\n");
  const claims = claimLines.map((l) => JSON.parse(l));
  const docs: number[] = readFileSync(join(SAMPLE, "corpus.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).doc_id);
  const inCorpus = new Set(docs.map(String));
  const claimsPath = join(dir, "claims.jsonl");
  writeFileSync(
    claimsPath,
    claims.map((c) => JSON.stringify({ id: c.id, claim: c.claim })).join("\n") + "\n",
  );

  // Five claims with evidence in the corpus, at least one of them contradicted.
  const withEvidence = claims.filter((c) => Object.keys(c.evidence ?? {}).some((d) => inCorpus.has(d)));
  const contradicted = withEvidence.find((c) =>
    Object.values(c.evidence).some((sets: any) => sets[0].label === "CONTRADICT"),
  );
  const chosen = [contradicted, ...withEvidence.filter((c) => c !== contradicted)].slice(0, 5);
  expect(chosen).toHaveLength(5);

  const gold = new Map<string, Gold>();
  const a: string[] = [];
  const b: string[] = [];
  const line = (claim: number, doc: number, ps: number, pc: number) =>
    JSON.stringify({ claim_id: claim, doc_id: doc, p_support: ps, p_contradict: pc });
  chosen.forEach((c, i) => {
    const doc = Object.keys(c.evidence).find((d) => inCorpus.has(d))!;
    const set = c.evidence[doc][0];
    const label = set.label as Gold["label"];
    gold.set(`${c.id}/${doc}`, { label, sentence: Math.min(...set.sentences) });
    const [ps, pc] = label === "SUPPORT" ? [0.9 - i * 0.01, 0.05] : [0.05, 0.9 - i * 0.01];
    const cited = new Set([...(c.cited_doc_ids ?? []).map(String), ...Object.keys(c.evidence)]);
    const other = (k: number) => {
      for (let j = k; ; j += 1) {
        const d = docs[j % docs.length];
        if (!cited.has(String(d))) return d;
      }
    };
    const da = other(i * 37 + 11);
    const db = other(i * 53 + 200);
    expect(da).not.toBe(db);
    a.push(line(c.id, Number(doc), ps, pc), line(c.id, da, 0.3 - i * 0.01, 0.1));
    b.push(line(c.id, Number(doc), ps * 0.9, pc * 0.9), line(c.id, db, 0.2 - i * 0.01, 0.15));
  });
  const runs = [
    { system: "system-a", path: join(dir, "system-a.jsonl"), lines: a },
    { system: "system-b", path: join(dir, "system-b.jsonl"), lines: b },
  ];
  for (const r of runs) writeFileSync(r.path, r.lines.join("\n") + "\n");
  const pairs = new Set([...a, ...b].map((l) => `${JSON.parse(l).claim_id}/${JSON.parse(l).doc_id}`)).size;
  return {
    corpus: join(SAMPLE, "corpus.jsonl"),
    claims: claimsPath,
    runs: runs.map(({ system, path }) => ({ system, path })),
    gold,
    pairs,
  };
}


async function logIn(browser: Browser, user: string, password: string, errors: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => errors.push(`${user}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${user}: ${m.text()}`);
  });
  await logInOn(page, server, user, password);
  return page;
}

/** The admin creates `user` with `role`; the one-time password shown once. */
async function createUser(admin: Page, user: string, role: string): Promise<string> {
  const form = admin.getByTestId("new-user");
  await form.getByLabel("New user").fill(user);
  await form.getByLabel("role").selectOption(role);
  await form.getByRole("button", { name: "Create" }).click();
  const secret = admin.getByTestId("one-time-password");
  await expect(secret).toContainText(`${user}'s one-time password is`);
  const password = (await secret.locator("code").textContent())!.trim();
  expect(password).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){5}$/);
  await expect(admin.locator(`tr[data-user="${user}"]`)).toContainText(role);
  return password;
}

/** Uploads a file through "Import data" and waits for its job to be done, with its bytes shown. */
async function importFile(lead: Page, kind: string, path: string, system?: string) {
  const file = path.split("/").pop()!;
  await lead.getByTestId("import-kind").selectOption(kind);
  if (system) await lead.getByLabel("System name", { exact: true }).fill(system);
  await lead.getByLabel("File (plain or .gz)").setInputFiles(path);
  await lead.getByTestId("import-submit").click();
  await expect(lead.getByTestId("import-queued")).toContainText(`imports the ${kind} from ${file}`);
  const job = lead.getByTestId("job").filter({ hasText: `${kind} from ${file}` });
  await expect(job).toHaveAttribute("data-status", "done", { timeout: 30_000 });
  await expect(job).toContainText(LEAD);
  // The progress column: the bytes read of the file's size, all of it once done.
  const size = job.locator("td").nth(4);
  await expect(size).toHaveText(/^\s*(\d[\d.]* (bytes|KiB|MiB)) of \1\s*$/);
  return job;
}

interface Tally {
  disagreements: string[];
  stages: Record<string, number>;
}

/**
 * One annotator works through their queue in the browser, with the keyboard: gold evidence is
 * labelled with its sentence, other pairs are "clearly no evidence"; second passes confirm the
 * first annotation, except the first one seen when there is no disagreement yet. Stops when the
 * queue is empty or holds only an adjudication (left for the lead). Returns the items labelled.
 */
async function work(page: Page, files: Files, tally: Tally): Promise<number> {
  await page.goto(`${server.url}/work/${PROJECT}`);
  await hydrated(page);
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  const empty = page.getByTestId("queue-empty");
  const confirm = page.getByTestId("confirm-first");
  let done = 0;
  for (;;) {
    await expect(item.or(empty).or(confirm)).toBeVisible();
    if (await confirm.isVisible()) {
      const button = page.getByTestId("guidelines").getByRole("button", { name: "I have read version 1" });
      await expect(button).toHaveAttribute("data-ready", "true");
      await button.click();
      await expect(confirm).toBeHidden();
      continue;
    }
    if (await empty.isVisible()) return done;
    const claim = (await item.getAttribute("data-claim"))!;
    const doc = (await item.getAttribute("data-doc"))!;
    const stage = (await item.getAttribute("data-stage"))!;
    const gold = files.gold.get(`${claim}/${doc}`);
    const key = `${claim}/${doc}`;
    if (stage === "adjudication") {
      // The lead adjudicates it; other items may wait behind it.
      expect(tally.disagreements).toContain(key);
      const counts = (await page.getByText(/^\d+ done · \d+ open$/).innerText()).match(/(\d+) open/)!;
      if (Number(counts[1]) === 1) return done;
      await page.keyboard.press(".");
      await expect(page.getByRole("status").filter({ hasText: "Skipped" })).toBeVisible();
      // Another item comes first now.
      await expect
        .poll(async () => `${await item.getAttribute("data-claim")}/${await item.getAttribute("data-doc")}`)
        .not.toBe(key);
      continue;
    }
    let outcome: string;
    if (stage === "first") {
      if (gold) {
        await page.keyboard.press(gold.label === "SUPPORT" ? "1" : "2");
        for (let i = 0; i < gold.sentence; i++) await page.keyboard.press("j");
        await page.keyboard.press("x");
        await page.keyboard.press("m");
        await expect(page.getByTestId("rationale")).toHaveText(`Rationale: sentences ${gold.sentence + 1}`);
        outcome = "waiting for a second annotator";
      } else {
        await page.keyboard.press("0");
        await expect(page.getByTestId("no-evidence")).toHaveClass(/\bon\b/);
        outcome = "final: NEI";
      }
    } else {
      expect(stage).toBe("second");
      expect(gold).toBeDefined();
      // Confirm mode: the first annotation is shown, and the form starts from it.
      await expect(page.getByTestId("first-label")).toContainText(gold!.label);
      if (tally.disagreements.length === 0) {
        await page.keyboard.press(gold!.label === "SUPPORT" ? "2" : "1");
        // Another label keeps nothing of the first annotation: this annotator's own rationale
        // and specificity.
        await expect(page.getByTestId("rationale")).toHaveText("Rationale: none selected");
        await page.keyboard.press("x");
        await page.keyboard.press("m");
        tally.disagreements.push(key);
        outcome = "the passes disagree: sent to adjudication";
      } else {
        outcome = `final: ${gold!.label}`;
      }
    }
    await page.keyboard.press("Enter");
    // The server's answer: the submission is the last one, with its outcome.
    const last = page.getByTestId("last-submission");
    await expect(last).toContainText(`Last: claim ${claim} / doc ${doc} —`);
    await expect(last).toContainText(outcome);
    await expect(page.getByTestId("form-error")).toHaveCount(0);
    tally.stages[stage] = (tally.stages[stage] ?? 0) + 1;
    done += 1;
  }
}

test("a campaign from an empty server to a downloaded release, in the browser only", async ({ browser }) => {
  test.setTimeout(180_000);
  const files = writeFiles();
  expect(files.pairs).toBe(15);
  const errors: string[] = [];

  // 1. The admin creates the lead and the two annotators, each with a one-time password.
  const admin = await logIn(browser, "admin", "admin-demo", errors);
  await admin.goto(`${server.url}/admin/users`);
  await hydrated(admin);
  const passwords: Record<string, string> = {};
  passwords[LEAD] = await createUser(admin, LEAD, "lead");
  for (const a of ANNOTATORS) passwords[a] = await createUser(admin, a, "annotator");

  // 2. The lead creates the project.
  const lead = await logIn(browser, LEAD, passwords[LEAD], errors);
  await lead.goto(`${server.url}/lead`);
  await hydrated(lead);
  const form = lead.getByTestId("new-project");
  await form.getByLabel("New project").fill(PROJECT);
  await form.getByLabel("description").fill("SciFact sample, two runs, two annotators");
  await form.getByRole("button", { name: "Create" }).click();
  await expect(lead.getByTestId("project-created")).toContainText(`Created ${PROJECT}`);
  await lead.getByTestId("project-created").getByRole("link", { name: PROJECT }).click();
  await expect(lead).toHaveURL(new RegExp(`/lead/projects/${PROJECT}$`));
  await hydrated(lead);
  const counts = lead.getByTestId("project-counts");

  // Uploads: corpus, claims, two runs; each a job followed to its end in the Jobs table.
  await lead.getByText("Import data", { exact: true }).click();
  const corpusJob = await importFile(lead, "corpus", files.corpus);
  await expect(corpusJob).toContainText("443 rows");
  const claimsJob = await importFile(lead, "claims", files.claims);
  await expect(claimsJob).toContainText("40 rows");
  await expect(claimsJob).not.toContainText("final label");
  for (const run of files.runs) {
    const job = await importFile(lead, "run", run.path, run.system);
    await expect(job).toContainText("10 rows, 1 system");
  }
  await expect(lead.getByTestId("job")).toHaveCount(4);
  await expect(lead.getByTestId("systems")).toContainText("system-a");
  await expect(lead.getByTestId("systems")).toContainText("system-b");
  await expect(counts).toContainText("443");

  // Members: the two annotators.
  const members = lead.getByTestId("members");
  await expect(members.locator(`tr[data-member="${LEAD}"]`)).toContainText("lead");
  for (const a of ANNOTATORS) {
    await members.getByLabel("User").fill(a);
    await members.getByRole("button", { name: "Add" }).click();
    await expect(members.locator(`tr[data-member="${a}"]`)).toContainText("annotator");
  }

  // Guidelines, version 1.
  const editor = lead.getByTestId("guidelines-editor");
  await expect(editor.getByTestId("guidelines-versions")).toContainText("No guidelines yet");
  await expect(editor.getByTestId("guidelines-text")).toHaveAttribute("data-ready", "true");
  await editor
    .getByLabel("Guidelines (Markdown)")
    .fill(
      "# Campaign rules\n\n- **SUPPORT** / **CONTRADICT**: mark the sentence that says so.\n" +
        "- `0`: the abstract clearly holds no evidence.\n",
    );
  await editor.getByRole("button", { name: "Save as version 1" }).click();
  await expect(editor.getByTestId("guidelines-saved")).toHaveText("Saved version 1.");
  await expect(editor.locator('tr[data-version="1"]')).toContainText(LEAD);

  // The pool: preview depths, then build at depth 10 (each run's ten predictions).
  await expect(lead.getByText("No pool yet")).toBeVisible();
  await lead.getByTestId("pool-depth").fill("10");
  await lead.getByRole("button", { name: "Preview", exact: true }).click();
  const preview = lead.getByTestId("preview");
  await expect(preview.locator("tbody tr")).toHaveCount(5);
  const firstStep = preview.locator("tbody tr").first().locator("td");
  await expect(firstStep.nth(0)).toHaveText("10");
  await expect(firstStep.nth(1)).toHaveText(String(files.pairs));
  await expect(firstStep.nth(3)).toHaveText(String(files.pairs));
  await lead.getByTestId("pool-build").click();
  await expect(lead.getByTestId("build-result")).toContainText(
    `Pool at depth 10 (confidence): ${files.pairs} pairs; this step added ${files.pairs}, of which ${files.pairs} need annotation.`,
  );
  await expect(lead.getByTestId("pool-summary")).toContainText(`${files.pairs} pairs pooled`);
  await expect(lead.getByTestId("per-system")).toContainText("system-b");

  // 3. The annotators: guidelines confirmed, then their queues, until nothing is left for them
  // but the adjudication.
  const pages: Page[] = [];
  for (const a of ANNOTATORS) pages.push(await logIn(browser, a, passwords[a], errors));
  const tally: Tally = { disagreements: [], stages: {} };
  const perAnnotator = [0, 0];
  for (let round = 0; round < 5; round++) {
    let n = 0;
    for (let i = 0; i < pages.length; i++) {
      const k = await work(pages[i], files, tally);
      perAnnotator[i] += k;
      n += k;
    }
    if (n === 0) break;
  }
  // Every pair had a first pass; each evidence pair a second; one of them was disputed.
  expect(tally.stages).toEqual({ first: files.pairs, second: files.gold.size });
  expect(tally.disagreements).toHaveLength(1);
  for (const n of perAnnotator) expect(n).toBeGreaterThan(0);

  // 4. The lead adjudicates the disagreement from the annotation page.
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/annotation`);
  await hydrated(lead);
  const [claim, doc] = tally.disagreements[0].split("/");
  const gold = files.gold.get(tally.disagreements[0])!;
  const rows = lead.getByTestId("disagreements").locator("tbody tr");
  await expect(rows).toHaveCount(1);
  await expect(rows.locator("td").nth(0)).toHaveText(claim);
  await expect(rows.locator("td").nth(1)).toHaveText(doc);
  await rows.getByRole("link", { name: "adjudicate" }).click();
  await expect(lead).toHaveURL(new RegExp(`/lead/projects/${PROJECT}/adjudicate/\\d+$`));
  const adjudication = lead.locator('[data-testid="item"][data-ready="true"]');
  await expect(adjudication).toHaveAttribute("data-stage", "adjudication");
  await expect(adjudication).toHaveAttribute("data-claim", claim);
  await expect(adjudication).toHaveAttribute("data-doc", doc);
  await expect(lead.getByTestId("opinions")).toContainText("SUPPORT");
  await expect(lead.getByTestId("opinions")).toContainText("CONTRADICT");
  await lead.getByTestId("comment-box").focus();
  await lead.keyboard.type("The marked sentence settles it.");
  await lead.keyboard.press("Control+Enter");
  await expect(lead.getByTestId("comment")).toContainText("settles it");
  await lead.keyboard.press("Escape");
  await lead.keyboard.press(gold.label === "SUPPORT" ? "1" : "2");
  for (let i = 0; i < gold.sentence; i++) await lead.keyboard.press("j");
  await lead.keyboard.press("x");
  await lead.keyboard.press("m");
  await lead.keyboard.press("Enter");
  await expect(lead.getByTestId("adjudicated")).toContainText(`Recorded: ${gold.label} — final: ${gold.label}.`);

  // Nothing is left for anyone.
  for (const p of pages) {
    await p.goto(`${server.url}/work/${PROJECT}`);
    await hydrated(p);
    await expect(p.getByTestId("queue-empty")).toBeVisible();
  }
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/annotation`);
  await hydrated(lead);
  await expect(lead.getByTestId("no-disagreements")).toBeVisible();

  // 5. The release: complete, made, downloaded.
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/releases`);
  await hydrated(lead);
  await expect(lead.getByTestId("release-complete")).toBeVisible();
  await expect(lead.getByTestId("release-partial")).toHaveCount(0);
  await lead.getByTestId("release-create").click();
  await expect(lead.getByTestId("release-result")).toContainText("Release 1 recorded");
  const releases = lead.getByTestId("releases");
  await expect(releases.locator("tbody tr")).toHaveCount(1);
  const row = releases.locator("tbody tr").first();
  await expect(row.locator("td").nth(0)).toHaveText("1");
  await expect(row.locator("td").nth(5)).toHaveText(String(files.pairs)); // judged pairs
  await expect(row.locator("td").nth(6)).toHaveText("0"); // unjudged
  const link = row.getByRole("link", { name: /\.tar\.gz/ });
  const [download] = await Promise.all([lead.waitForEvent("download"), link.click()]);
  const archive = join(mkdtempSync(join(tmpdir(), "claimpool-release-")), download.suggestedFilename() || "release.tar.gz");
  await download.saveAs(archive);
  const bytes = readFileSync(archive);
  expect(bytes.length).toBeGreaterThan(0);
  expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
  const listing = execFileSync("tar", ["tzf", archive], { encoding: "utf8" }).trim().split("\n");
  const root = `${PROJECT}-release-1`;
  expect(listing).toContain(`${root}/qrels.txt`);
  expect(listing).toContain(`${root}/claims.jsonl`);
  // Every pooled pair has its final label: the gold evidence pairs as evidence, the rest NEI.
  const labels = execFileSync("tar", ["xzOf", archive, `${root}/qrels-labels.txt`], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.split(" "));
  expect(labels).toHaveLength(files.pairs);
  const evidence = labels.filter(([, , , label]) => label !== "NEI").map(([c, , d, label]) => `${c}/${d}/${label}`);
  expect(evidence.sort()).toEqual([...files.gold].map(([k, g]) => `${k}/${g.label}`).sort());

  expect(errors).toEqual([]);
});
