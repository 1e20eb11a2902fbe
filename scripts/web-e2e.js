// Interactive step of scripts/web-e2e.sh (with HEADROOM_E2E_PLAYWRIGHT=1):
// opens the page in headless Chromium through playwright-core, goes to the
// Plan screen, types a workload and a target into the inputs, presses
// Answer, waits until the page says a plan is shown, checks it is for the
// users typed, and saves a screenshot.
//   node scripts/web-e2e.js BASE_URL CHROMIUM OUT.png
const { chromium } = require("playwright-core");

(async () => {
  const [base, exe, png] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(base + "/", { timeout: 60000 });
    await page.waitForSelector('body[data-state="idle"]', { timeout: 60000 });
    await page.click('nav button[data-tab="plan"]');
    await page.fill('input[name="workload"]', "prompt=512,gen=128,users=12");
    await page.fill('input[name="slo"]', "tpot=60ms");
    await page.click("#go");
    await page.waitForSelector('body[data-state="ready"][data-tab="plan"]', { timeout: 120000 });
    const text = await page.textContent("#out");
    if (!/\b12 users at\b/.test(text)) throw new Error("the plan shown is not for the 12 users typed: " + text.slice(0, 200));
    if (!/Typical error \(median, on sources held out of the fit, for closed loops of users\): decode ±\d+%.*TPOT ±\d+%/.test(text))
      throw new Error("the plan shows no error band for its workload: " + text.slice(0, 400));
    const best = await page.getAttribute("body", "data-plan");
    await page.screenshot({ path: png });
    console.log(`web-e2e: interactive ok — typed users=12, plan shown: ${best}`);
  } finally {
    await browser.close();
  }
})().catch(e => { console.error("web-e2e: FAIL:", e.message); process.exit(1); });
