// A real OpenID Connect provider for the tests (oidc/provider.mjs, panva's oidc-provider on
// http://127.0.0.1:<free port>), and signing in on its development login and consent pages.
import { Page } from "@playwright/test";
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export interface Provider {
  /// http://127.0.0.1:<port>, no trailing slash: also the discovery document's issuer.
  issuer: string;
  stop: () => void;
}

/// Starts the provider with one confidential client; resolves once it listens.
export async function startProvider(opts: { clientId: string; clientSecret: string; redirectUris: string[] }): Promise<Provider> {
  const args = [resolve(__dirname, "../oidc/provider.mjs"), "--port", "0", "--client-id", opts.clientId, "--client-secret", opts.clientSecret];
  for (const uri of opts.redirectUris) args.push("--redirect-uri", uri);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const issuer = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      fail(new Error(`the OpenID provider did not start in 30 s:\n${out}\n${stderr}`));
    }, 30_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/^issuer: (\S+)$/m);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`the OpenID provider exited with ${code ?? signal}:\n${out}\n${stderr}`));
    });
  });
  return { issuer, stop: () => child.kill("SIGTERM") };
}

// The development pages' forms (oidc-provider's lib/views/login.js and interaction.js): each posts
// a hidden `prompt` of login or consent; the login form has text `login` and password `password`
// inputs and a "Sign-in" button, the consent form a "Continue" button.
const LOGIN_FORM = 'form:has(input[name="prompt"][value="login"])';
const CONSENT_FORM = 'form:has(input[name="prompt"][value="consent"])';

/// On a page showing the provider's login form: signs in as `login` (any password does) and
/// grants consent if asked; resolves once the browser has left the provider (on its way back to
/// the redirect URI).
export async function signInAtProvider(page: Page, login: string): Promise<void> {
  const provider = new URL(page.url()).origin;
  const form = page.locator(LOGIN_FORM);
  await form.locator('input[name="login"]').fill(login);
  await form.locator('input[name="password"]').fill(`${login}-password`);
  await form.locator('button[type="submit"]').click();
  const consent = page.locator(`${CONSENT_FORM} button[type="submit"]`);
  let consented = false;
  for (const deadline = Date.now() + 20_000; new URL(page.url()).origin === provider; ) {
    if (!consented && (await consent.isVisible().catch(() => false))) {
      await consent.click();
      consented = true;
    } else if (Date.now() > deadline) {
      const text = await page.locator("body").innerText().catch(() => "");
      throw new Error(`still at the OpenID provider after signing in as ${login}: ${page.url()}\n${text}`);
    } else {
      await page.waitForTimeout(100);
    }
  }
}
