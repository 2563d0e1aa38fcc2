// Gold checks and qualification (issue 16): the lead makes the claims' citation pairs gold, sets
// one check among every 3 items and a qualification (1 training item, 2 graded, pass at 50 %);
// a new annotator passes the qualification (seeing the reference after the training item), then
// works a queue in which one item of every 3 is a gold check, never told which; the lead sees
// their gold accuracy. The oracle is the demo's own claims file: a citation pair's label is its
// evidence label, or NEI for a cited abstract without evidence.
import { test, expect, Page, Browser } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { startDemo, hydrated, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const PROJECT = "scifact-demo";

function cli(args: string[], input?: string): string {
  return execFileSync(server.bin, ["--db", server.db, ...args], {
    input,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
  });
}

// claim/doc → the citation label, for every cited pair of the demo's claims.
function citationLabels(): Map<string, string> {
  const labels = new Map<string, string>();
  const text = readFileSync(resolve(__dirname, "../../server/demo/claims.jsonl"), "utf8");
  for (const line of text.split("\n").filter((l) => l.trim())) {
    const c = JSON.parse(line);
    for (const doc of c.cited_doc_ids ?? []) labels.set(`${c.id}/${doc}`, "NEI");
    for (const [doc, sets] of Object.entries(c.evidence ?? {})) {
      labels.set(`${c.id}/${doc}`, (sets as { label: string }[])[0].label);
    }
  }
  return labels;
}

async function login(browser: Browser, user: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(`${user}-demo`);
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  return page;
}


interface Item {
  claim: string;
  doc: string;
}

async function current(page: Page): Promise<Item> {
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  return { claim: (await item.getAttribute("data-claim"))!, doc: (await item.getAttribute("data-doc"))! };
}

// Answers the item on screen with `label` by keyboard, and waits for the page to take it.
async function answer(page: Page, label: string) {
  const before = page.getByTestId("last-submission");
  const was = (await before.count()) ? await before.innerText() : "";
  if (label === "NEI") {
    await page.keyboard.press("3");
  } else {
    await page.keyboard.press(label === "SUPPORT" ? "1" : "2");
    await page.keyboard.press("x");
    await page.keyboard.press("m");
  }
  await page.keyboard.press("Enter");
  await expect.poll(async () => ((await before.count()) ? await before.innerText() : "")).not.toBe(was);
}

function wrong(label: string): string {
  return label === "NEI" ? "SUPPORT" : "NEI";
}

test("a new annotator qualifies, meets gold checks at the set rate, and the lead sees their accuracy", async ({ browser }) => {
  const oracle = citationLabels();
  // First passes are served when asked, so that an annotator admitted late gets work.
  cli(["project", "judging", "--project", PROJECT, "--order", "mtf"]);

  const lead = await login(browser, "lead");
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/gold`);
  await hydrated(lead);
  await lead.getByTestId("gold-add").click();
  await expect(lead.getByTestId("gold-outcome")).toContainText("Added");
  await lead.getByLabel("One check in every").fill("3");
  await lead.getByLabel("training").fill("1");
  await lead.getByLabel("graded").fill("2");
  await lead.getByLabel("pass at").fill("50%");
  await lead.getByTestId("gold-save").click();
  await expect(lead.getByTestId("gold-now")).toContainText("One gold check among every 3 items");
  await expect(lead.getByTestId("gold-now")).toContainText("2 graded, pass at 50 %");

  cli(["user", "add", "--username", "cand", "--role", "annotator", "--password-stdin"], "cand-demo\n");
  cli(["project", "member", "add", "--project", PROJECT, "--user", "cand", "--role", "annotator"]);

  const cand = await login(browser, "cand");
  await cand.goto(`${server.url}/work/${PROJECT}`);
  await expect(cand.getByTestId("qualification")).toHaveAttribute("data-phase", "training");
  // Training: answered wrongly on purpose; the reference follows.
  const training = await current(cand);
  const reference = oracle.get(`${training.claim}/${training.doc}`);
  expect(reference, "a training item is a citation pair").toBeTruthy();
  await answer(cand, wrong(reference!));
  await expect(cand.getByTestId("feedback-label")).toHaveText(reference!);
  await expect(cand.getByTestId("feedback")).toHaveAttribute("data-agrees", "false");
  // Graded: right both times.
  for (let i = 0; i < 2; i++) {
    await expect(cand.getByTestId("qualification")).toHaveAttribute("data-phase", "graded");
    const item = await current(cand);
    const label = oracle.get(`${item.claim}/${item.doc}`);
    expect(label, "a graded item is a citation pair").toBeTruthy();
    await answer(cand, label!);
  }
  await expect(cand.getByTestId("qualification")).toHaveCount(0);

  // Real work: 9 items; one of every 3 is a gold check (a citation pair), on the page like any
  // other. The second check is answered wrongly.
  let checks = 0;
  let right = 0;
  for (let i = 0; i < 9; i++) {
    const item = await current(cand);
    const label = oracle.get(`${item.claim}/${item.doc}`);
    if (label) {
      checks += 1;
      const give = checks === 2 ? wrong(label) : label;
      if (give === label) right += 1;
      await answer(cand, give);
    } else {
      await answer(cand, "NEI");
    }
  }
  expect(checks).toBe(3);

  await lead.goto(`${server.url}/lead/projects/${PROJECT}/gold`);
  await hydrated(lead);
  const row = lead.locator('[data-testid="gold-annotator"][data-user="cand"]');
  await expect(row.getByTestId("gold-accuracy").first()).toHaveText(`${((right * 100) / checks).toFixed(1)} %`);
  await expect(row.locator("td").nth(1)).toHaveText(String(checks));
  await expect(lead.locator('[data-testid="candidate"][data-user="cand"]')).toHaveAttribute("data-standing", "admitted");
});
