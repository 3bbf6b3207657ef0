// Approve, reject, a turn's diff, and undo after its dry run, all on the page;
// no band under the header, words wrapped whole, times as the CLI prints them,
// and what holds the disk's space.
// Driven by console_browser_test.sh, which mounts, starts the console and sets
// the environment read below. Exits non-zero on the first failed check.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { chromium } = require(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'playwright-core'));

const { CONSOLE_URL, LEASECTL, SOCK, ROOT, HOSTILE_NAME, SHOTS } = process.env;
const asAgent = ['--reuid', '65534', '--regid', '65534', '--clear-groups'];

// The agent adds a line to the hostile file, rewriting it whole (so the journal
// keeps its old content); its exit status (0: written).
function agentWrite() {
  const code = "import sys\ntry:\n    open(sys.argv[1], 'w').write('before\\nafter\\n')\nexcept OSError as e:\n    sys.exit(e.errno)\n";
  return spawnSync('setpriv', [...asAgent, '/usr/bin/python3', '-c', code, path.join(ROOT, HOSTILE_NAME)]).status;
}

function check(ok, what) {
  if (!ok) throw new Error('check failed: ' + what);
  console.log('ok: ' + what);
}

// Every word under `selector` (text between spaces and '/') on one line: a word
// broken across lines has a client rect on each. Also says how many lines the
// whole text takes, so that a check on text that never wraps cannot pass.
async function wordsKeptWhole(page, selector) {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    const broken = [];
    let words = 0;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[^\s/]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        words++;
        if (lines.size > 1) broken.push(m[0]);
      }
    }
    const all = document.createRange();
    all.selectNodeContents(root);
    const lines = new Set([...all.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return { words, broken, lines: lines.size };
  }, selector);
}

// The gap between the header's bottom edge and the first daemon's top edge.
async function bandUnderHeader(page) {
  return page.evaluate(() => {
    const header = document.querySelector('header').getBoundingClientRect();
    const first = document.querySelector('section.daemon').getBoundingClientRect();
    const margin = parseFloat(getComputedStyle(document.querySelector('section.daemon')).marginTop);
    return { gap: first.top - header.bottom, margin };
  });
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
    // No empty band under the header: the first daemon follows it at its own margin.
    let band = await bandUnderHeader(page);
    check(Math.abs(band.gap - band.margin) <= 1, `nothing between the header and the first daemon (gap ${band.gap}px, margin ${band.margin}px)`);

    // Refused, then asked for: both arrive on the open page.
    const refused = agentWrite();
    check(refused === 13, "the agent's write is refused with EACCES (status " + refused + ')');
    const refusal = page.locator('li[data-refusal]').filter({ hasText: HOSTILE_NAME });
    await refusal.first().waitFor({ timeout: 15000 });
    check(true, 'the refusal shows live, the name as text');
    // Its time as the CLI prints it (ISO 8601), in UTC and saying so.
    const shown = (await refusal.first().locator('time').textContent()).trim();
    check(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/.test(shown), `the refusal's time reads ${shown}`);
    const cli = execFileSync(LEASECTL, ['--socket', SOCK, 'status'], { env: { ...process.env, TZ: 'UTC' } }).toString();
    check(cli.includes('  ' + shown.replace(' UTC', '') + '  turn '), "it is the time `TZ=UTC leasectl status` prints");
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

    // A long path and reason wrap between words (the path after a '/'); a word too
    // long for its column is cut with an ellipsis and is whole on hover.
    const longWord = 'an_identifier_far_too_long_for_any_column_of_the_table_at_all';
    const longReason = 'the retry budget in the payment client is too small for the nightly batch, ' +
      'so raise it and add a test that runs the batch twice with the ' + longWord + ' flag set';
    const longPath = 'services/payments/client/configuration/retries/per_environment/production/overrides.yaml';
    const longId = JSON.parse(execFileSync('setpriv', [...asAgent, LEASECTL, '--json', '--socket', SOCK,
      'request', '--reason', longReason, '--path', longPath]).toString()).result.request.id;
    const longRow = `tr[data-request="${longId}"]`;
    await page.locator(longRow).waitFor({ timeout: 15000 });
    for (const [cell, what] of [[longRow + ' td.reason', 'the reason'], [longRow + ' td:nth-child(2)', 'the path'],
      [longRow + ' td:nth-child(3)', 'the command line']]) {
      const m = await wordsKeptWhole(page, cell);
      check(m.lines > 1 && m.words > 3, `${what} wraps (${m.lines} lines, ${m.words} words)`);
      check(m.broken.length === 0, `no word of ${what} is broken across lines: ${m.broken.join(' ')}`);
    }
    const cut = page.locator(longRow + ' td.reason .token');
    check((await cut.count()) === 1 && (await cut.getAttribute('title')) === longWord, 'the long word is one token, whole in its title');
    check(await cut.evaluate(n => n.scrollWidth > n.clientWidth && getComputedStyle(n).textOverflow === 'ellipsis'),
      'the long word is cut with an ellipsis');
    await page.screenshot({ path: path.join(SHOTS, 'console-request.png') });

    // A fleet bridge says the centre is down: the page says so, and a local
    // approval (the click below) still works.
    execFileSync(LEASECTL, ['--socket', SOCK, 'fleet', 'report', '--centre', 'unreachable', '--detail', 'no route to the ledger']);
    const centre = page.locator('section.daemon p[data-centre="unreachable"]');
    await centre.waitFor({ timeout: 15000 });
    check((await centre.textContent()).startsWith('Fleet: the centre is unreachable (no route to the ledger)'),
      'the page says the fleet centre is unreachable');

    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached', timeout: 15000 });
    await page.locator('tr[data-grant]').first().waitFor({ timeout: 15000 });
    check(true, `approved ${id} on the page; a grant is in force`);
    band = await bandUnderHeader(page);
    check((await page.locator('header #message').textContent()).includes('approve: done') &&
      Math.abs(band.gap - band.margin) <= 1, `the message shows in the header, no band under it (gap ${band.gap}px)`);
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
    // What holds the disk's space: the journal of the older turns, as status counts it.
    const status = JSON.parse(execFileSync(LEASECTL, ['--json', '--socket', SOCK, 'status']).toString()).result;
    const older = status.journal.older_turns_bytes;
    check(older > 0, `the journal of older turns holds ${older} bytes`);
    // "older turns 245 bytes", or "older turns 1.2 KiB (1234 bytes)".
    await page.locator('p[data-journal]').filter({ hasText: new RegExp('older turns ([0-9.]+ [KMGT]iB \\()?' + older + ' bytes') })
      .waitFor({ timeout: 15000 });
    check(true, `the page shows the older turns' ${older} bytes`);
    check((await page.locator('p[data-disk]').textContent()).includes('Free on the disk: '), 'and the free space');
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

    // The agent fills the disk under a grant: the page says so, and names the one
    // command that frees the older turns' journal, as `leasectl status` does.
    execFileSync(LEASECTL, ['--socket', SOCK, 'grant', '--reason', 'fill it', '--path', 'filler']);
    const fill = spawnSync('setpriv', [...asAgent, '/bin/sh', '-c', 'head -c 200M /dev/zero > filler'], { cwd: ROOT });
    check(fill.status !== 0 && fill.stderr.toString().includes('No space left'), 'the agent filled the disk');
    const full = page.locator('p[data-disk-full]');
    await full.waitFor({ timeout: 15000 });
    const fullText = await full.textContent();
    check(fullText.includes('The disk is full') && fullText.includes('leasectl journal prune'),
      'on the full disk the page names `leasectl journal prune`');
    const cliFull = execFileSync(LEASECTL, ['--socket', SOCK, 'status']).toString();
    check(cliFull.includes('leasectl journal prune'), 'as `leasectl status` does');
    await full.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'console-full-disk.png') });
    check(errors.length === 0, 'no script error on the page: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
