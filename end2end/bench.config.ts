import base from "./playwright.config";
import { defineConfig } from "@playwright/test";

// Measurements of the release site (bench/): figures printed, nothing asserted.
export default defineConfig({ ...base, testDir: "./bench", testMatch: /.*\.bench\.ts/ });
