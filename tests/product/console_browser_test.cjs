// Approve, reject, a turn's diff, and undo after its dry run, all on the page.
// Driven by console_browser_test.sh, which mounts, starts the console and sets
// the environment read below. Exits non-zero on the first failed check.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { chromium } = require(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'playwright-core'));

const { CONSOLE_URL, LEASECTL, SOCK, ROOT, HOSTILE_NAME, SHOTS } = process.env;
const asAgent = ['--reuid', '65534', '--regid', '65534', '--clear-groups'];

// The agent writes the hostile file; its exit status (0: written).
function agentWrite() {
  const code = "import sys\ntry:\n    open(sys.argv[1], 'a').write('after\\n')\nexcept OSError as e:\n    sys.exit(e.errno)\n";
  return spawnSync('setpriv', [...asAgent, '/usr/bin/python3', '-c', code, path.join(ROOT, HOSTILE_NAME)]).status;
}

function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what);
  console.log('ok: ' + what);
}

(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(CONSOLE_URL);
    check(!(await page.url()).includes('token='), 'the token leaves the address bar');
    await page.getByText('live', { exact: true }).waitFor({ timeout: 15000 });
    await page.locator('section.daemon').first().waitFor({ timeout: 15000 });

    // Refused, then asked for: both arrive on the open page.
    const refused = agentWrite();
    check(refused === 13, "the agent's write is refused with EACCES (status " + refused + ')');
    const refusal = page.locator('li[data-refusal]').filter({ hasText: HOSTILE_NAME });
    await refusal.first().waitFor({ timeout: 15000 });
    check(true, 'the refusal shows live, the name as text');
    const reply = JSON.parse(execFileSync('setpriv', [...asAgent, LEASECTL, '--json', '--socket', SOCK,
      'request', '--reason', '<b>bold?</b> need to edit it', '--path', HOSTILE_NAME]).toString());
    const id = reply.result.request.id;
    const row = page.locator(`tr[data-request="${id}"]`);
    await row.waitFor({ timeout: 15000 });
    check((await row.textContent()).includes(HOSTILE_NAME), `request ${id} shows the hostile name verbatim`);
    check((await row.textContent()).includes('<b>bold?</b>'), 'the reason shows as text');
    check((await page.locator('#daemons img, #daemons b:has-text("bold?")').count()) === 0,
      'no markup from the agent became an element');
    check((await page.evaluate(() => window.pwned)) === undefined, 'no script from the agent ran');
    await page.screenshot({ path: path.join(SHOTS, 'console-request.png') });

    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached', timeout: 15000 });
    await page.locator('tr[data-grant]').first().waitFor({ timeout: 15000 });
    check(true, `approved ${id} on the page; a grant is in force`);
    check(agentWrite() === 0, "the agent's retry goes through");
    await page.locator('pre.diff').filter({ hasText: 'after' }).first().waitFor({ timeout: 15000 });
    check(true, "the turn's diff shows the change");
    await page.screenshot({ path: path.join(SHOTS, 'console-approved.png') });

    // Reject, with a reason typed on the page.
    const other = JSON.parse(execFileSync('setpriv', [...asAgent, LEASECTL, '--json', '--socket', SOCK,
      'request', '--reason', 'and this one', '--path', 'other.txt']).toString()).result.request.id;
    const otherRow = page.locator(`tr[data-request="${other}"]`);
    await otherRow.waitFor({ timeout: 15000 });
    await otherRow.getByRole('textbox').fill('not this turn');
    await otherRow.getByRole('button', { name: 'Reject' }).click();
    await otherRow.waitFor({ state: 'detached', timeout: 15000 });
    check(true, `rejected ${other} on the page`);

    // The next turn; then the last one's changes, and its undo after the dry run.
    execFileSync(LEASECTL, ['--socket', SOCK, 'turn']);
    const turn = String(reply.result.request.turn);
    await page.locator('section.daemon input[data-key$="|turn"]').fill(turn);
    await page.getByRole('button', { name: 'Diff' }).click();
    await page.locator('#preview pre.diff').filter({ hasText: 'after' }).waitFor({ timeout: 15000 });
    check((await page.locator('#preview-title').textContent()) === 'Changes of turn ' + turn, `Diff shows turn ${turn}`);
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Undo…' }).click();
    await page.locator('#preview-body').filter({ hasText: 'would undo turn ' + turn }).waitFor({ timeout: 15000 });
    check(fs.readFileSync(path.join(ROOT, HOSTILE_NAME), 'utf8') === 'before\nafter\n', 'the dry run changed nothing');
    await page.screenshot({ path: path.join(SHOTS, 'console-undo-preview.png') });
    await page.locator('#preview-confirm').click();
    await page.locator('#message').filter({ hasText: 'undid turn ' + turn }).waitFor({ timeout: 15000 });
    check(fs.readFileSync(path.join(ROOT, HOSTILE_NAME), 'utf8') === 'before\n', `Undo put turn ${turn} back`);
    check(errors.length === 0, 'no script error on the page: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
