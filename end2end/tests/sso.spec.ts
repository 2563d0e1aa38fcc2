// Single sign-on through a real OpenID provider (panva's oidc-provider, end2end/oidc/provider.mjs):
// the login page's button, the provider's login and consent, and back signed in; a new user
// name becomes an annotator's account, an existing one is bound at its first sign-in.
import { test, expect } from "@playwright/test";
import { freePort, hydrated, query, startDemo, Server, violations } from "./server";
import { Provider, signInAtProvider, startProvider } from "./oidc";

let server: Server;
let provider: Provider;
const LABEL = "Sign in with the test provider";

test.beforeAll(async () => {
  // The provider must know the redirect URI before claimpool starts, so claimpool's port is
  // chosen first.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  provider = await startProvider({ clientId: "claimpool-e2e", clientSecret: "e2e-client-secret", redirectUris: [`${origin}/auth/sso/callback`] });
  server = await startDemo({
    port,
    args: ["--public-url", origin, "--oidc-issuer", provider.issuer, "--oidc-client-id", "claimpool-e2e", "--oidc-new-users", "annotator", "--oidc-label", LABEL],
    env: { CLAIMPOOL_OIDC_CLIENT_SECRET: "e2e-client-secret" },
  });
});
test.afterAll(() => {
  server?.stop();
  provider?.stop();
});

test("a new user signs in through the OpenID provider and lands where they were going, as an annotator", async ({ page }) => {
  await page.goto(`${server.url}/account`);
  await expect(page).toHaveURL(/\/login\?next=/);
  await hydrated(page);
  expect(await violations(page)).toEqual([]);
  await page.getByRole("link", { name: LABEL }).click();
  await signInAtProvider(page, "oidc-ann");
  await expect(page.getByTestId("current-user")).toHaveText("oidc-ann");
  await expect(page).toHaveURL(/\/account$/);
  expect(query(server, "SELECT role FROM users WHERE username = 'oidc-ann'")).toBe("annotator");
  expect(query(server, `SELECT COUNT(*) FROM sso_identities i JOIN users u ON u.id = i.user_id WHERE u.username = 'oidc-ann' AND i.issuer = '${provider.issuer}' AND i.subject = 'oidc-ann'`)).toBe("1");
  // The account has no password: the login form refuses any.
  const other = await page.context().browser()!.newContext();
  const p = await other.newPage();
  await p.goto(`${server.url}/login`);
  await hydrated(p);
  await p.getByLabel("User name").fill("oidc-ann");
  await p.getByLabel("Password").fill("oidc-ann-password");
  await p.getByLabel("Password").press("Enter");
  await expect(p.getByTestId("login-error")).toHaveText("wrong user name or password");
  await other.close();
});

test("an existing account is bound at its first sign-in and keeps its role", async ({ page }) => {
  await page.goto(`${server.url}/login`);
  await hydrated(page);
  await page.getByRole("link", { name: LABEL }).click();
  await signInAtProvider(page, "lead");
  await expect(page.getByTestId("current-user")).toHaveText("lead");
  await expect(page.getByRole("link", { name: "Projects" }).first()).toBeVisible();
  expect(query(server, "SELECT COUNT(*) FROM users WHERE username = 'lead'")).toBe("1");
  expect(query(server, "SELECT COUNT(*) FROM sso_identities i JOIN users u ON u.id = i.user_id WHERE u.username = 'lead'")).toBe("1");
  // Local accounts keep working beside it.
  const other = await page.context().browser()!.newContext();
  const p = await other.newPage();
  await p.goto(`${server.url}/login`);
  await hydrated(p);
  await p.getByLabel("User name").fill("ann1");
  await p.getByLabel("Password").fill("ann1-demo");
  await p.getByLabel("Password").press("Enter");
  await expect(p.getByTestId("current-user")).toHaveText("ann1");
  await other.close();
});

test("a return from the provider that this browser did not start is refused", async ({ page }) => {
  const res = await page.goto(`${server.url}/auth/sso/callback?code=forged&state=forged`);
  expect(res?.status()).toBe(400);
  await expect(page.getByRole("alert")).toContainText("expired or was started in another browser");
  await expect(page.getByRole("link", { name: "Back to the login page" })).toBeVisible();
});
