// The fleet console in chromium: hostile text shown as text, Approve on a row,
// a batch by path prefix, and an error (not a success) with the ledger stopped.
// Driven by fleet_console_browser_test.sh, which starts the ledger and the
// console and sets the environment read below. Exits non-zero on the first
// failed check.
'use strict';
const path = require('path');
const { spawnSync } = require('child_process');
const { chromium } = require(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'playwright-core'));

const { CONSOLE_URL, SHOTS, PROJECT, R1, R2, R3, R4, HOSTILE_ROOT, STOP_LEDGER } = process.env;

// A name as `leasectl fleet` prints it (base::quote_name): one with a '"' in
// double quotes, with C escapes.
function quoted(name) {
  return '"' + name.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what);
  console.log('ok: ' + what);
}

(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(CONSOLE_URL);
    check(!(await page.url()).includes('token='), 'the token leaves the address bar');
    await page.getByText('live', { exact: true }).waitFor({ timeout: 15000 });
    check((await page.locator('#who').textContent()) === 'as alice', 'the page names the role: alice');
    const row = page.locator(`tr[data-request="${R1}"]`);
    await row.waitFor({ timeout: 15000 });
    const text = await row.textContent();
    check(text.includes('<img src=x onerror="window.pwned=1"><script>window.pwned=3</script>'),
      'the reason\'s markup shows as text');
    check(text.includes('\\x1b]0;owned\\x07') && text.includes('\\u{202e}gpj.exe'),
      'its terminal escape and right-to-left override show as escapes');
    check(!text.includes('\u202e') && !text.includes('\x1b'), 'no bidi or escape character is on the page');
    check(text.includes('src/<b>bold</b>.c'), 'the path shows verbatim');
    check(text.includes('T1') && text.includes('turn 3') && text.includes('pid 4242 python3 edit.py'),
      'task, turn and the asking process are shown');
    const hostileProject = page.locator('section[data-project]').filter({ hasText: quoted(HOSTILE_ROOT) });
    check((await hostileProject.count()) === 1, 'the project whose root is markup is listed by its root, quoted as the CLI prints it');
    const refusal = page.locator('li[data-refusal]').filter({ hasText: quoted('<img src=x onerror="window.pwned=4">.txt') });
    check((await refusal.count()) === 1, 'the shipped refusal shows its path as text');
    check(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/.test((await refusal.locator('time').textContent()).trim()),
      'the refusal\'s time reads as the CLI prints it');
    check((await page.locator('#projects img, #projects script, #projects b:has-text("bold")').count()) === 0,
      'no markup from a machine became an element');
    check((await page.evaluate(() => window.pwned)) === undefined, 'no script from a machine ran');
    await page.screenshot({ path: path.join(SHOTS, 'fleet-console-request.png') });

    await row.getByRole('textbox').fill('looks fine');
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached', timeout: 15000 });
    const said = await page.locator('#message').textContent();
    check(said === `approved request ${R1} as alice`, `approved ${R1} with a click (${said})`);

    const batch = page.locator(`div[data-batch="${PROJECT}"]`);
    await batch.getByRole('textbox').fill('src');
    await batch.getByRole('button', { name: 'Approve all' }).click();
    await page.locator(`tr[data-request="${R2}"]`).waitFor({ state: 'detached', timeout: 15000 });
    await page.locator(`tr[data-request="${R3}"]`).waitFor({ state: 'detached', timeout: 15000 });
    check((await page.locator('#message').textContent()) === 'approved 2 request(s), one decision each as alice',
      'the batch under src approved two requests');
    check((await page.locator(`tr[data-request="${R4}"]`).count()) === 1, `${R4} (docs/) stays pending`);

    // The ledger stops: the page says so, and a click is an error, not "done".
    const stop = spawnSync('sh', ['-c', STOP_LEDGER]);
    check(stop.status === 0, 'the ledger is stopped');
    await page.locator('#centre[data-reachable="no"]').waitFor({ timeout: 30000 });
    check((await page.locator('#centre').textContent()).startsWith('ledger unreachable'), 'the page says the ledger is unreachable');
    const last = page.locator(`tr[data-request="${R4}"]`);
    await last.getByRole('button', { name: 'Reject' }).click();
    await page.locator('#message.bad').filter({ hasText: `reject ${R4} refused: [unreachable]` }).waitFor({ timeout: 30000 });
    check(true, `rejecting ${R4} with the ledger stopped is shown as an error`);
    await page.screenshot({ path: path.join(SHOTS, 'fleet-console-unreachable.png') });
    check(errors.length === 0, 'no script error on the page: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
