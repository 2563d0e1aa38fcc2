// Guidelines in the browser (issue 14): the lead writes the project's guidelines; an annotator
// finds them open on the annotation page before their first item, confirms the version, gets an
// item, and shows or hides the guidelines again with `?`.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, logInOn, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

const PROJECT = "scifact-demo";

async function logIn(browser: Browser, user: string, errors: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => errors.push(`${user}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${user}: ${m.text()}`);
  });
  await logInOn(page, server, user);
  return page;
}

test("a lead writes guidelines; an annotator reads them with ?, confirms, and gets an item", async ({ browser }) => {
  const errors: string[] = [];
  const lead = await logIn(browser, "lead", errors);
  await lead.goto(`${server.url}/lead/projects/${PROJECT}`);
  await expect(lead.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  const editor = lead.getByTestId("guidelines-editor");
  await expect(editor.getByTestId("guidelines-versions")).toContainText("No guidelines yet");
  await expect(editor.getByTestId("guidelines-text")).toHaveAttribute("data-ready", "true");
  await editor
    .getByLabel("Guidelines (Markdown)")
    .fill("# Labelling rules\n\n- **SUPPORT**: the abstract says so.\n- *NEI*: it does not.\n\n<script>alert(1)</script>\n");
  await editor.getByRole("button", { name: "Save as version 1" }).click();
  await expect(editor.getByTestId("guidelines-saved")).toHaveText("Saved version 1.");
  await expect(editor.locator('tr[data-version="1"]')).toContainText("lead");
  await expect(editor.getByRole("button", { name: "Save as version 2" })).toBeVisible();

  const ann = await logIn(browser, "ann1", errors);
  await ann.goto(`${server.url}/work/${PROJECT}`);
  await expect(ann.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  // No item yet: the guidelines are open, with the version to confirm.
  await expect(ann.getByTestId("confirm-first")).toBeVisible();
  await expect(ann.getByTestId("item")).toHaveCount(0);
  const panel = ann.getByTestId("guidelines");
  await expect(panel).toBeVisible();
  await expect(panel.getByRole("heading", { name: "Labelling rules" })).toBeVisible();
  await expect(panel.locator("strong")).toHaveText("SUPPORT");
  // Raw HTML is shown as text, never run.
  await expect(panel).toContainText("<script>alert(1)</script>");
  await expect(panel.locator("script")).toHaveCount(0);
  // The button works once the page has hydrated it.
  await expect(panel.getByTestId("confirm-guidelines")).toHaveAttribute("data-ready", "true");
  await panel.getByRole("button", { name: "I have read version 1" }).click();

  // Confirmed: the panel closes and the first item comes.
  await expect(ann.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();
  await expect(panel).toBeHidden();
  await expect(ann.getByTestId("key-list")).toContainText("guidelines");
  await ann.keyboard.press("?");
  await expect(panel).toBeVisible();
  await expect(panel).toContainText("version 1");
  await expect(panel.getByTestId("confirm-guidelines")).toHaveCount(0);
  await ann.keyboard.press("?");
  await expect(panel).toBeHidden();
  await ann.getByTestId("guidelines-toggle").click();
  await expect(panel).toBeVisible();
  await ann.keyboard.press("Escape");
  await expect(panel).toBeHidden();

  // A new version: the annotator confirms again before the next item.
  await expect(editor.getByTestId("guidelines-text")).toHaveAttribute("data-ready", "true");
  await editor.getByLabel("Guidelines (Markdown)").fill("# Labelling rules\n\nSUPPORT needs a rationale sentence.\n");
  await editor.getByRole("button", { name: "Save as version 2" }).click();
  await expect(editor.getByTestId("guidelines-saved")).toHaveText("Saved version 2.");
  await ann.reload();
  await expect(ann.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  await expect(ann.getByTestId("confirm-first")).toBeVisible();
  await expect(panel).toContainText("SUPPORT needs a rationale sentence.");
  await expect(panel.getByTestId("confirm-guidelines")).toHaveAttribute("data-ready", "true");
  await panel.getByRole("button", { name: "I have read version 2" }).click();
  await expect(ann.locator('[data-testid="item"][data-ready="true"]')).toBeVisible();

  expect(errors).toEqual([]);
});
