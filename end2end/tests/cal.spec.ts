// The live cal order's stopping test in the browser: the lead sets cal on the annotation page and
// draws a stopping sample; an annotator is served the sample's pairs before cal's proposals; once
// they are judged the panel states the test, its p-value the hypergeometric one computed here.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, query, hydrated, logInOn, violations, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const PROJECT = "scifact-demo";

async function login(browser: Browser, user: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await logInOn(page, server, user);
  return page;
}

/** The pair on the annotator's screen, as `claim/doc`. */
async function current(page: Page): Promise<string> {
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  return `${await item.getAttribute("data-claim")}/${await item.getAttribute("data-doc")}`;
}

/** Judges the pair on screen "clearly no evidence" and waits for the next. */
async function judgeNei(page: Page): Promise<string> {
  const was = await current(page);
  await page.keyboard.press("0");
  await page.keyboard.press("Enter");
  await expect
    .poll(async () => {
      const item = page.locator('[data-testid="item"][data-ready="true"]');
      if ((await item.count()) === 0) return "empty";
      return `${await item.getAttribute("data-claim")}/${await item.getAttribute("data-doc")}`;
    })
    .not.toBe(was);
  return was;
}

const SIZE = 3;

test("cal: the lead draws a stopping sample, annotators judge it first, the panel states the test", async ({ browser }) => {
  const lead = await login(browser, "lead");
  const annotation = `${server.url}/lead/projects/${PROJECT}/annotation`;
  await lead.goto(annotation);
  await hydrated(lead);
  await lead.locator("#judging-order").selectOption("cal");
  await lead.getByTestId("judging-save").click();
  const said = lead.locator('p.ok[role="status"]');
  await expect(said).toContainText("Judging order cal", { timeout: 60_000 });
  await expect(said).toContainText("The corpus was searched for each claim's top 100");
  await expect(lead.getByTestId("cal-stopping")).toContainText("No stopping sample yet");

  const ann1 = await login(browser, "ann1");
  await ann1.goto(`${server.url}/work/${PROJECT}`);
  const kept = await current(ann1);

  // A sample of 3 for recall 0.5 with 80% confidence.
  await lead.locator("#stop-recall").fill("0.5");
  await lead.locator("#stop-confidence").fill("0.8");
  await lead.locator("#stop-size").fill(String(SIZE));
  await lead.getByTestId("stop-draw").click();
  await expect(said).toContainText(`Drew ${SIZE} of the`);
  await expect(lead.getByTestId("cal-stopping")).toContainText(`0 of ${SIZE} pairs judged`);
  await expect(lead.getByRole("progressbar", { name: "Stopping sample judged" })).toBeVisible();
  expect(await violations(lead), "axe-core on the judging panel with a sample waiting").toEqual([]);

  const sample: string[] = [];
  for (let i = 0; i < SIZE; i++) {
    sample.push(
      query(
        server,
        `SELECT c.claim_id || '/' || d.doc_id FROM cal_stop_pairs p JOIN claims c ON c.id = p.claim_id JOIN documents d ON d.id = p.doc_id WHERE p.position = ${i}`,
      ),
    );
  }
  const unjudged = Number(query(server, "SELECT unjudged FROM cal_stop_samples"));
  const found = Number(query(server, "SELECT found FROM cal_stop_samples"));
  // The sample's pairs another annotator holds (their first pass kept when cal took over) wait
  // for them; ann1 gets the others next, in draw order.
  const holders = new Map<string, string>();
  for (const pair of sample) {
    const [claim, doc] = pair.split("/");
    const who = query(
      server,
      `SELECT u.username FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id JOIN users u ON u.id = a.annotator_id WHERE a.status = 'open' AND a.stage = 'first' AND c.claim_id = '${claim}' AND d.doc_id = '${doc}'`,
    );
    if (who !== "" && who !== "ann1") holders.set(pair, who);
  }
  await ann1.reload();
  expect(await judgeNei(ann1)).toBe(kept);
  const expected = sample.filter((p) => p !== kept && !holders.has(p));
  for (const pair of expected) {
    expect(await judgeNei(ann1)).toBe(pair);
  }
  for (const [pair, who] of holders) {
    const page = await login(browser, who);
    await page.goto(`${server.url}/work/${PROJECT}`);
    expect(await current(page)).toBe(pair);
    await judgeNei(page);
  }

  // Every sampled pair NEI (k = 0) after K found: under H0 (recall < 0.5) the N unjudged held
  // at least K_tar = R − K evidence pairs, R the least total with 0.5·R > K, and
  // p = P(no evidence in 3 draws) = Π_{i<3} (N − K_tar − i) / (N − i).
  let total = 0;
  while (0.5 * total <= found) total++;
  const kTar = total - found;
  let p = 1;
  for (let i = 0; i < SIZE; i++) p *= (unjudged - kTar - i) / (unjudged - i);
  // The page shows the next item at once and sends the submission meanwhile: the last one may
  // still be on its way. The lead looks once the server has stored every sampled pair's.
  await expect
    .poll(() =>
      query(
        server,
        "SELECT COUNT(*) FROM cal_stop_pairs p WHERE EXISTS (SELECT 1 FROM judgments j WHERE j.claim_id = p.claim_id AND j.doc_id = p.doc_id)",
      ),
    )
    .toBe(String(SIZE));
  await lead.goto(annotation);
  const stopping = lead.getByTestId("cal-stopping");
  await expect(stopping).toContainText("not yet shown");
  await expect(stopping).toContainText(`p = ${p.toFixed(4)}`);
  await expect(stopping).toContainText(`0 of its ${SIZE} pairs are evidence`);
  expect(await violations(lead), "axe-core on the judging panel with the test made").toEqual([]);

  // The report's inclusion table has the sample's estimated F1 column (no sample beyond the
  // depth here: a dash).
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/report`);
  const inclusion = lead.getByTestId("inclusion");
  await expect(inclusion.locator("th")).toContainText(["F1 estimated [95%]"]);
  await expect(inclusion.locator("tbody tr").first().locator("td").last()).toHaveText("–");
});
