// The annotation protocol driven with the keyboard only, in both second-pass modes:
// first pass NEI; first pass with label, rationale, specificity and revision; a second pass that
// agrees; one that disagrees → adjudication with a comment → final label; the lead sees the result.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, query, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "scifact-demo";

async function login(browser: Browser, user: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(`${user}-demo`);
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toBeVisible();
  return page;
}

async function openQueue(page: Page) {
  await page.goto(`${server.url}/work/${PROJECT}`);
  await expect(page.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();
}

interface Pair {
  claim: string;
  doc: string;
}

async function current(page: Page): Promise<Pair & { stage: string }> {
  const item = page.locator('[data-testid="item"][data-ready="true"]');
  await expect(item).toBeVisible();
  return {
    claim: (await item.getAttribute("data-claim"))!,
    doc: (await item.getAttribute("data-doc"))!,
    stage: (await item.getAttribute("data-stage"))!,
  };
}

// Waits until the item on screen is no longer `was` at its stage (the submission or skip went
// through). The same pair may come straight back at the next stage: a disagreement can hand the
// adjudication to the annotator who just submitted.
async function movedOn(page: Page, was: Pair, stage: string) {
  await expect
    .poll(async () => {
      const item = page.locator('[data-testid="item"]');
      if ((await item.count()) === 0) return "empty";
      return `${await item.getAttribute("data-claim")}/${await item.getAttribute("data-doc")}/${await item.getAttribute("data-stage")}`;
    })
    .not.toBe(`${was.claim}/${was.doc}/${stage}`);
}

// Skips (key ".") until the queue shows `pair` at `stage`; false when it never comes.
async function skipTo(page: Page, pair: Pair, stage: string): Promise<boolean> {
  await openQueue(page);
  for (let i = 0; i < 40; i++) {
    const now = await current(page);
    if (now.claim === pair.claim && now.doc === pair.doc && now.stage === stage) return true;
    await page.keyboard.press(".");
    await movedOn(page, now, now.stage);
    await expect(page.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();
  }
  return false;
}

// The annotator who holds `pair` at `stage`, read from the lead's open items.
async function holder(lead: Page, pair: Pair, stage: string): Promise<string> {
  const annotation = `${server.url}/lead/projects/${PROJECT}/annotation`;
  await lead.goto(annotation);
  // Clicks until the page is hydrated and the list shows. A retry clicks only while the list is
  // not there, and comes back to the page should a click have landed on a link as the list
  // appeared (the cold CI of 87556cd ended on a claim's page and retried there for 4 minutes).
  await expect(async () => {
    if (lead.url() !== annotation) await lead.goto(annotation);
    if (!(await lead.getByTestId("open-items").isVisible())) {
      await lead.getByRole("button", { name: "List open items to reassign" }).click({ timeout: 1000 });
    }
    await expect(lead.getByTestId("open-items")).toBeVisible({ timeout: 2000 });
  }).toPass();
  const row = lead
    .getByTestId("open-items")
    .locator("tr", { has: lead.locator(`td:text-is("${pair.claim}")`) })
    .filter({ has: lead.locator(`td:text-is("${pair.doc}")`) })
    .filter({ has: lead.locator(`td:text-is("${stage}")`) });
  await expect(row).toHaveCount(1);
  return (await row.locator("td").nth(5).innerText()).trim();
}

/// The last-submission line names `pair` and says `text`: the server has stored that submission
/// (the item on screen moves on before it answers, and the line may still tell of an earlier
/// submission of the same annotator, made on another page).
async function lastSays(page: Page, pair: Pair, text: string) {
  const last = page.getByTestId("last-submission");
  await expect(last).toContainText(`claim ${pair.claim} / doc ${pair.doc}`);
  await expect(last).toContainText(text);
}

test("confirm mode: NEI, a full first pass, agreement, disagreement and adjudication", async ({ browser }) => {
  const lead = await login(browser, "lead");
  const ann1 = await login(browser, "ann1");
  await openQueue(ann1);
  await expect(ann1.getByTestId("key-list")).toContainText("clearly no evidence");

  // 1. First pass: clearly no evidence → NEI, done.
  const nei = await current(ann1);
  expect(nei.stage).toBe("first");
  await ann1.keyboard.press("0");
  await ann1.keyboard.press("Enter");
  await movedOn(ann1, nei, "first");
  await lastSays(ann1, nei, "final: NEI");

  // 2. First pass with label, rationale, specificity and a revised claim.
  const full = await current(ann1);
  await ann1.keyboard.press("1"); // SUPPORT
  await ann1.keyboard.press("x"); // sentence 1
  await ann1.keyboard.press("j");
  await ann1.keyboard.press("x"); // sentence 2
  await ann1.keyboard.press("s"); // evidence more specific
  await expect(ann1.getByTestId("rule")).toContainText("special case");
  await ann1.keyboard.press("e");
  await ann1.keyboard.type("A special case of the claim holds.");
  await expect(ann1.getByTestId("rationale")).toContainText("sentences 1, 2");
  await ann1.keyboard.press("Enter");
  await movedOn(ann1, full, "first");
  await lastSays(ann1, full, "waiting for a second annotator");

  // 3. Another first pass (SUPPORT, sentence 1, matches), to be disputed.
  const disputed = await current(ann1);
  await ann1.keyboard.press("1");
  await ann1.keyboard.press("x");
  await ann1.keyboard.press("m");
  await ann1.keyboard.press("Enter");
  await movedOn(ann1, disputed, "first");
  await lastSays(ann1, disputed, "waiting for a second annotator");

  // 3b. A first pass with a specificity and a revised claim, which the second annotator will
  // call NEI.
  const toNei = await current(ann1);
  await ann1.keyboard.press("2"); // CONTRADICT
  await ann1.keyboard.press("x");
  await ann1.keyboard.press("r"); // closely related
  await ann1.keyboard.press("e");
  await ann1.keyboard.type("A closely related claim.");
  await ann1.keyboard.press("Enter");
  await movedOn(ann1, toNei, "first");
  await lastSays(ann1, toNei, "waiting for a second annotator");

  // 4. The second annotator (never ann1) sees the first annotation and agrees: final.
  const second = await holder(lead, full, "second");
  expect(second).not.toBe("ann1");
  const s = await login(browser, second);
  expect(await skipTo(s, full, "second")).toBe(true);
  await expect(s.getByTestId("first-label")).toContainText("SUPPORT");
  await s.keyboard.press("Enter"); // the form starts from the first annotation
  await movedOn(s, full, "second");
  await lastSays(s, full, "final: SUPPORT");

  // 5. A second pass that disagrees → adjudication.
  const second2 = await holder(lead, disputed, "second");
  const d = await login(browser, second2);
  expect(await skipTo(d, disputed, "second")).toBe(true);
  await d.keyboard.press("2"); // CONTRADICT
  // Another label keeps nothing of the first annotation: the rationale and specificity are
  // this annotator's to give.
  await expect(d.getByTestId("rationale")).toHaveText("Rationale: none selected");
  await expect(d.getByTestId("spec-matches")).toHaveAttribute("aria-pressed", "false");
  await d.keyboard.press("x");
  await d.keyboard.press("m");
  await d.keyboard.press("Enter");
  await movedOn(d, disputed, "second");
  await lastSays(d, disputed, "adjudication");

  // 5b. A second pass that changes the first annotator's CONTRADICT to NEI stores none of the
  // first annotator's fields under the second annotator's name.
  const neiSecond = await holder(lead, toNei, "second");
  const n = await login(browser, neiSecond);
  expect(await skipTo(n, toNei, "second")).toBe(true);
  await expect(n.getByTestId("first-label")).toContainText("CONTRADICT");
  await expect(n.getByTestId("spec-closely_related")).toHaveAttribute("aria-pressed", "true");
  await n.keyboard.press("3"); // NEI
  await expect(n.getByTestId("rationale")).toHaveText("Rationale: none selected");
  await expect(n.getByTestId("spec-closely_related")).toHaveAttribute("aria-pressed", "false");
  await expect(n.getByTestId("revised-claim")).toHaveCount(0);
  await n.keyboard.press("Enter");
  await movedOn(n, toNei, "second");
  await lastSays(n, toNei, "adjudication");
  const stored = query(
    server,
    "SELECT j.label || '|' || j.rationale || '|' || COALESCE(j.specificity, '-') || '|' || " +
      "COALESCE(j.revised_claim, '-') FROM judgment_rows j JOIN users u ON u.id = j.annotator_id " +
      "JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id " +
      `WHERE j.stage = 'second' AND u.username = '${neiSecond}' ` +
      `AND c.claim_id = '${toNei.claim}' AND d.doc_id = '${toNei.doc}'`,
  ).trim();
  expect(stored).toBe("NEI|[]|-|-");
  // And it says what the second annotator changed: every field (the first was a CONTRADICT with
  // a rationale, "closely related" and a revised claim).
  const confirmed = query(
    server,
    "SELECT cf.kept || '|' || cf.edited FROM confirmations cf JOIN judgment_rows j ON j.id = cf.judgment_id " +
      "JOIN users u ON u.id = j.annotator_id JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id " +
      `WHERE u.username = '${neiSecond}' AND c.claim_id = '${toNei.claim}' AND d.doc_id = '${toNei.doc}'`,
  ).trim();
  expect(confirmed).toBe('[]|["label","rationale","specificity","revised_claim"]');

  // 6. The adjudicator sees both annotations, comments, and decides.
  const adjudicator = await holder(lead, disputed, "adjudication");
  expect(["ann1", second2]).toContain(adjudicator);
  const a = adjudicator === "ann1" ? ann1 : d;
  expect(await skipTo(a, disputed, "adjudication")).toBe(true);
  await expect(a.getByTestId("opinions")).toContainText("SUPPORT");
  await expect(a.getByTestId("opinions")).toContainText("CONTRADICT");
  // Both passes' rationales are marked on the abstract: each chose sentence 1.
  await expect(a.getByTestId("pass-legend")).toBeVisible();
  await expect(a.getByTestId("sentence-1").locator(".pass-tag")).toHaveCount(2);
  await a.getByTestId("comment-box").focus();
  await a.keyboard.type("Sentence 1 reports the opposite effect.");
  await a.keyboard.press("Control+Enter");
  await expect(a.getByTestId("comment")).toContainText("opposite effect");
  await a.keyboard.press("Escape");
  await a.keyboard.press("2");
  await a.keyboard.press("x");
  await a.keyboard.press("m");
  await a.keyboard.press("Enter");
  await movedOn(a, disputed, "adjudication");
  await lastSays(a, disputed, "final: CONTRADICT");

  // 7. The lead sees the final labels, specificity and revision.
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/claims/${full.claim}`);
  const fullRow = lead.getByTestId("claim-pairs").locator("tr", { has: lead.locator(`td:text-is("${full.doc}")`) });
  await expect(fullRow).toContainText("SUPPORT (pooling)");
  await expect(fullRow.getByTestId("pair-specificity")).toContainText("evidence more specific");
  await expect(fullRow.getByTestId("pair-specificity")).toContainText("A special case of the claim holds.");
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/claims/${disputed.claim}`);
  const dRow = lead.getByTestId("claim-pairs").locator("tr", { has: lead.locator(`td:text-is("${disputed.doc}")`) });
  await expect(dRow).toContainText("CONTRADICT (pooling)");
});

test("search and judge: an annotator's find is confirmed by a second annotator and reported under search", async ({ browser }) => {
  const lead = await login(browser, "lead");
  const ann1 = await login(browser, "ann1");
  await openQueue(ann1);
  await expect(ann1.getByTestId("key-list")).toContainText("search the corpus for this claim");
  const before = await current(ann1);

  // "/" opens the search, its query the claim's text; the index is built on first use.
  await ann1.keyboard.press("/");
  const panel = ann1.getByTestId("search-panel");
  await expect(panel).toBeVisible();
  await expect(ann1.getByTestId("search-query")).toBeFocused();
  await expect(ann1.getByTestId("search-query")).not.toHaveValue("");
  await expect(ann1.getByTestId("search-summary")).toContainText("abstracts hold a word of the query", { timeout: 60_000 });
  const results = panel.getByTestId("search-result");
  expect(await results.count()).toBeGreaterThan(0);
  expect(await results.count()).toBeLessThanOrEqual(20);
  await expect(results.first().locator("mark").first()).toBeVisible();
  // Nothing of systems or scores.
  await expect(panel).not.toContainText("score");

  // The first result not in the pool is judged: it is ann1's current item, a first pass.
  const open = results.filter({ has: ann1.getByTestId("judge-found") }).first();
  const doc = (await open.getAttribute("data-doc"))!;
  await open.getByTestId("judge-found").click();
  await expect(panel).toBeHidden();
  const found = await current(ann1);
  expect(found).toEqual({ claim: before.claim, doc, stage: "first" });
  await ann1.keyboard.press("1"); // SUPPORT
  await ann1.keyboard.press("x"); // sentence 1
  await ann1.keyboard.press("m"); // matches
  await ann1.keyboard.press("Enter");
  await movedOn(ann1, found, "first");
  await lastSays(ann1, found, "waiting for a second annotator");

  // A second annotator confirms it (confirm mode): final SUPPORT.
  const second = await holder(lead, found, "second");
  expect(second).not.toBe("ann1");
  const s = await login(browser, second);
  expect(await skipTo(s, found, "second")).toBe(true);
  await expect(s.getByTestId("first-label")).toContainText("SUPPORT");
  await s.keyboard.press("Enter");
  await movedOn(s, found, "second");
  await lastSays(s, found, "final: SUPPORT");

  // The lead's report has the system search; the claim page names the find's rank.
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/report`);
  await expect(lead.getByTestId("system-scores")).toContainText("search", { timeout: 60_000 });
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/claims/${found.claim}`);
  const row = lead.getByTestId("claim-pairs").locator("tr", { has: lead.locator(`td:text-is("${doc}")`) });
  await expect(row).toContainText("search");
  await expect(row).toContainText("SUPPORT (pooling)");
});

test("blind mode: the second annotator labels unseen; the lead adjudicates a disagreement", async ({ browser }) => {
  const lead = await login(browser, "lead");
  await lead.goto(`${server.url}/lead/projects/${PROJECT}/annotation`);
  await expect(lead.getByTestId("mode")).toHaveText("confirm");
  await expect(async () => {
    await lead.getByTestId("switch-mode").click({ timeout: 1000 });
    await expect(lead.getByTestId("mode")).toHaveText("blind", { timeout: 1000 });
  }).toPass();

  // Two first passes by ann2.
  const ann2 = await login(browser, "ann2");
  await openQueue(ann2);
  const pairs: Pair[] = [];
  for (let i = 0; i < 2; i++) {
    const now = await current(ann2);
    if (now.stage !== "first") {
      await ann2.keyboard.press(".");
      await movedOn(ann2, now, now.stage);
      i--;
      continue;
    }
    await ann2.keyboard.press("2"); // CONTRADICT
    await ann2.keyboard.press("x");
    await ann2.keyboard.press("g"); // evidence more general
    await ann2.keyboard.press("e");
    await ann2.keyboard.type("The general case fails.");
    await ann2.keyboard.press("Enter");
    await movedOn(ann2, now, now.stage);
    pairs.push(now);
  }

  // Blind second pass that agrees: no first label shown before submitting; revealed after.
  const [agree, disagree] = pairs;
  const h1 = await holder(lead, agree, "second");
  expect(h1).not.toBe("ann2");
  const p1 = await login(browser, h1);
  expect(await skipTo(p1, agree, "second")).toBe(true);
  await expect(p1.getByTestId("first-label")).toHaveCount(0);
  await expect(p1.getByTestId("stage")).toContainText("blind");
  await p1.keyboard.press("2");
  await p1.keyboard.press("x");
  await p1.keyboard.press("g");
  await p1.keyboard.press("e");
  await p1.keyboard.type("The general case fails.");
  await p1.keyboard.press("Enter");
  await movedOn(p1, agree, "second");
  await lastSays(p1, agree, "final: CONTRADICT");
  await expect(p1.getByTestId("revealed-first")).toHaveText("CONTRADICT");

  // Blind second pass that disagrees → adjudication, decided by the lead with a comment.
  const h2 = await holder(lead, disagree, "second");
  const p2 = await login(browser, h2);
  expect(await skipTo(p2, disagree, "second")).toBe(true);
  await expect(p2.getByTestId("first-label")).toHaveCount(0);
  await p2.keyboard.press("3"); // NEI
  await p2.keyboard.press("Enter");
  await movedOn(p2, disagree, "second");
  await lastSays(p2, disagree, "adjudication");
  await expect(p2.getByTestId("revealed-first")).toHaveText("CONTRADICT");

  await lead.goto(`${server.url}/lead/projects/${PROJECT}/annotation`);
  const row = lead.getByTestId("disagreements").locator("tr", { has: lead.locator(`td:text-is("${disagree.doc}")`) });
  await row.getByRole("link", { name: "adjudicate" }).click();
  await expect(lead.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();
  await expect(lead.getByTestId("opinions")).toContainText("NEI");
  await lead.getByTestId("comment-box").focus();
  await lead.keyboard.type("The abstract refutes the general claim.");
  await lead.keyboard.press("Control+Enter");
  await expect(lead.getByTestId("comment")).toContainText("refutes the general claim");
  await lead.keyboard.press("Escape");
  await lead.keyboard.press("2");
  await lead.keyboard.press("x");
  await lead.keyboard.press("g");
  await lead.keyboard.press("e");
  await lead.keyboard.type("The general case fails.");
  await lead.keyboard.press("Enter");
  await expect(lead.getByTestId("adjudicated")).toContainText("final: CONTRADICT");
  // Decided, the pair keeps its thread, and the next disagreement (the NEI of 5b) is a link away.
  await expect(lead.getByTestId("not-adjudication")).toBeVisible();
  await expect(lead.getByTestId("comment")).toContainText("refutes the general claim");
  await lead.getByTestId("next-disagreement").click();
  await expect(lead.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();
  await expect(lead.getByTestId("stage")).toContainText("Adjudication");

  await lead.goto(`${server.url}/lead/projects/${PROJECT}/claims/${disagree.claim}`);
  const dRow = lead.getByTestId("claim-pairs").locator("tr", { has: lead.locator(`td:text-is("${disagree.doc}")`) });
  await expect(dRow).toContainText("CONTRADICT (pooling)");
  await expect(dRow.getByTestId("pair-specificity")).toContainText("The general case fails.");
});

test("j and k keep the sentence cursor on screen, at 1366×768 and at 200 % zoom", async ({ browser }) => {
  // 200 % zoom of a 1366×768 screen: half the CSS pixels, each drawn twice as large.
  for (const [width, height, scale] of [[1366, 768, 1], [683, 384, 2]]) {
    const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: scale });
    const page = await context.newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel("User name").fill("ann3");
    await page.getByLabel("Password").fill("ann3-demo");
    await page.getByLabel("Password").press("Enter");
    await expect(page.getByTestId("welcome")).toBeVisible();
    await openQueue(page);
    // A long abstract, where the cursor can leave the screen: skipped to.
    let count = await page.getByTestId("sentences").locator("li").count();
    for (let tries = 0; count < 10 && tries < 30; tries++) {
      const was = await current(page);
      await page.keyboard.press(".");
      await movedOn(page, was, was.stage);
      count = await page.getByTestId("sentences").locator("li").count();
    }
    expect(count).toBeGreaterThanOrEqual(10);
    for (let i = 1; i <= count; i++) {
      const cursor = page.getByTestId(`sentence-${i}`);
      await expect(cursor).toHaveAttribute("aria-current", "true");
      await expect(cursor).toBeInViewport();
      if (i < count) await page.keyboard.press("j");
    }
    for (let i = count; i >= 1; i--) {
      await expect(page.getByTestId(`sentence-${i}`)).toBeInViewport();
      if (i > 1) await page.keyboard.press("k");
    }
    // Side by side still at 200 %: the form beside the abstract, not below it.
    const abstractBox = await page.locator("article.abstract").boundingBox();
    const formBox = await page.getByTestId("form").boundingBox();
    expect(formBox!.x).toBeGreaterThan(abstractBox!.x + abstractBox!.width - 1);
    await context.close();
  }
});
