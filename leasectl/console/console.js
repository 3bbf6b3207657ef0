// The leasefs console's page. Everything a daemon reports (file names, reasons,
// command lines, diffs) may have been chosen by the agent: it is only ever put
// into the page as text (textContent), never as markup.
'use strict';

const consoleToken = document.querySelector('meta[name="console-token"]').content;
const daemonsBox = document.getElementById('daemons');
const message = document.getElementById('message');
const seenRequests = new Set();
let firstSnapshot = true;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else if (k === 'onclick') node.addEventListener('click', v);
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return node;
}

// A time as the CLI prints it (ISO 8601: 2026-12-07 09:26:02), in UTC and saying
// so, as status.md does: the page may be read in another zone than the daemon's.
function when(ms) {
  if (typeof ms !== 'number') return '';
  const iso = new Date(ms).toISOString();
  return iso.slice(0, 10) + ' ' + iso.slice(11, 19) + ' UTC';
}

// Sizes in binary units, with the exact count the CLI prints beside them.
function bytesText(n) {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n || 0;
  let unit = '';
  for (const u of units) {
    if (v < 1024) break;
    v /= 1024;
    unit = u;
  }
  return unit ? v.toFixed(1) + ' ' + unit + ' (' + (n || 0) + ' bytes)' : (n || 0) + ' bytes';
}

// Lines break only between words (and paths after a '/'); a word too long for
// its column is cut with an ellipsis and shown whole on hover.
const kLongToken = 32;
function token(text) {
  if (text.length > kLongToken) return el('span', { class: 'token', title: text }, text);
  // A browser would also break after a '-' (--json, per-environment).
  return text.includes('-') ? el('span', { class: 'word' }, text) : text;
}
function appendWords(node, text) {
  for (const part of String(text ?? '').split(/(\s+)/)) {
    if (part) node.append(/^\s/.test(part) ? part : token(part));
  }
  return node;
}
function words(text) {
  return appendWords(el('span', { class: 'words' }), text);
}
function pathText(path) {
  const code = el('code', { class: 'path' });
  String(path ?? '').split('/').forEach((segment, i) => {
    if (i > 0) code.append('/', el('wbr'));
    appendWords(code, segment);
  });
  return code;
}
function pathList(paths, none) {
  if (!paths || !paths.length) return el('code', {}, none);
  return el('div', {}, ...paths.map(p => el('div', {}, pathText(p))));
}

function say(text, bad) {
  message.textContent = text;
  message.className = bad ? 'bad' : 'good';
}

// One action, sent with the token in a header; the daemon's reply.
async function act(daemon, cmd, args) {
  const res = await fetch('/api/action', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Console-Token': consoleToken },
    body: JSON.stringify({ daemon, cmd, args }),
  });
  if (!res.ok) {
    const text = await res.text();
    say(cmd + ': ' + text, true);
    return null;
  }
  const reply = await res.json();
  if (!reply.ok) {
    const e = reply.error || {};
    say(cmd + ' refused: [' + (e.code || '?') + '] ' + (e.message || ''), true);
    return null;
  }
  // A look (diff, a dry run) is shown where it was asked for.
  if (cmd !== 'diff' && !args.dry_run) say(cmd + ': done', false);
  return reply.result || {};
}

// Inputs keep what the person typed across a re-render (keyed by data-key).
function input(key, placeholder, size) {
  return el('input', { type: 'text', 'data-key': key, placeholder, 'aria-label': placeholder, size: size || 20 });
}
function valueOf(section, key) {
  const node = section.querySelector('[data-key="' + CSS.escape(key) + '"]');
  return node ? node.value.trim() : '';
}

function diffBlock(text) {
  const pre = el('pre', { class: 'diff' });
  for (const line of (text || '').split('\n')) {
    let cls = '';
    if (line.startsWith('+') && !line.startsWith('+++')) cls = 'add';
    else if (line.startsWith('-') && !line.startsWith('---')) cls = 'del';
    else if (line.startsWith('@@')) cls = 'hunk';
    pre.append(el('span', { class: cls }, line + '\n'));
  }
  return pre;
}

const dialog = document.getElementById('preview');
let onConfirm = null;
function showPreview(title, body, confirm) {
  document.getElementById('preview-title').textContent = title;
  const box = document.getElementById('preview-body');
  box.replaceChildren(body);
  const button = document.getElementById('preview-confirm');
  button.hidden = !confirm;
  onConfirm = confirm;
  dialog.showModal();
}
document.getElementById('preview-close').addEventListener('click', () => dialog.close());
document.getElementById('preview-confirm').addEventListener('click', async () => {
  dialog.close();
  if (onConfirm) await onConfirm();
});

function undoText(r) {
  const lines = [];
  for (const p of r.restored || []) lines.push('restored ' + (p.path || p));
  for (const p of r.removed || []) lines.push('removed  ' + (p.path || p));
  for (const p of r.not_undoable || []) lines.push('cannot undo ' + (p.path || JSON.stringify(p)));
  return (r.applied ? 'undid' : 'would undo') + ' turn ' + r.turn + ': ' +
    (r.restored || []).length + ' restored, ' + (r.removed || []).length + ' removed\n' + lines.join('\n');
}

function requestRow(d, section, r) {
  const key = d.id + '|' + r.id;
  const who = r.requester_pid ? 'pid ' + r.requester_pid + ' ' + (r.requester_command || '') : 'uid ' + r.requester_uid;
  return el('tr', { 'data-request': r.id },
    el('td', {}, el('code', {}, r.id), r.ask ? el('div', { class: 'muted' }, 'a write is waiting') : null),
    el('td', {}, pathList(r.paths, '** (the whole tree)')),
    el('td', {}, el('code', {}, words(who))),
    el('td', { class: 'reason' }, words(r.reason || '')),
    el('td', {}, el('div', { class: 'actions' },
      input('reason|' + key, 'reason (optional)', 12),
      el('button', { type: 'button', onclick: () => act(d.id, 'approve', withReason({ id: r.id }, valueOf(section, 'reason|' + key))) }, 'Approve'),
      el('button', { type: 'button', onclick: () => act(d.id, 'reject', withReason({ id: r.id }, valueOf(section, 'reason|' + key))) }, 'Reject'))));
}

function withReason(args, reason) {
  if (reason) args.reason = reason;
  return args;
}

function grantForm(d, section) {
  const k = d.id + '|grant|';
  return el('div', { class: 'actions' },
    input(k + 'paths', 'paths, comma separated (src/**)'),
    input(k + 'ops', 'ops (write,create,rename,unlink,attr)'),
    input(k + 'ttl', 'TTL (10m)', 8),
    input(k + 'reason', 'reason'),
    el('button', { type: 'button', onclick: () => {
      const args = { reason: valueOf(section, k + 'reason') || 'granted from the console' };
      const paths = valueOf(section, k + 'paths').split(',').map(s => s.trim()).filter(Boolean);
      if (paths.length) args.paths = paths;
      const ops = valueOf(section, k + 'ops');
      if (ops) args.ops = ops;
      const ttl = valueOf(section, k + 'ttl');
      if (ttl) args.ttl = ttl;
      act(d.id, 'grant', args);
    } }, 'Grant'));
}

function turnTools(d, section, current) {
  const k = d.id + '|turn';
  const turnOf = () => {
    const n = parseInt(valueOf(section, k) || String(current), 10);
    return Number.isFinite(n) ? n : current;
  };
  return el('div', { class: 'actions' },
    el('label', {}, 'Turn ', input(k, String(current), 5)),
    el('button', { type: 'button', onclick: async () => {
      const turn = turnOf();
      const r = await act(d.id, 'diff', { turn });
      if (r) showPreview('Changes of turn ' + turn, diffBlock(r.text || '(no changes)'), null);
    } }, 'Diff'),
    el('button', { type: 'button', onclick: async () => {
      const turn = turnOf();
      const dry = await act(d.id, 'undo', { turn, dry_run: true });
      if (!dry) return;
      showPreview('Undo turn ' + turn + '? (dry run)', el('pre', {}, undoText(dry)), async () => {
        const done = await act(d.id, 'undo', { turn, reason: 'undone from the console' });
        if (done) say(undoText(done), false);
      });
    } }, 'Undo…'));
}

// What holds the disk's space, and on a full disk the one command that frees it
// (the CLI's `leasectl status` says the same).
function diskSpace(s) {
  const out = [el('h3', {}, 'Disk space')];
  const j = s.journal;
  const older = j ? (j.older_turns_bytes || 0) : 0;
  const disk = s.disk;
  if (disk && disk.full) {
    out.push(el('p', { class: 'bad', 'data-disk-full': '' },
      'The disk is full: writes that take space get ENOSPC until space is freed.',
      older > 0 ? el('span', {}, ' The journal of older turns holds ' + bytesText(older) + ': ',
        el('code', {}, 'leasectl journal prune'), ' frees it (those turns can then no longer be undone).') : null));
  }
  if (j) {
    out.push(el('p', { 'data-journal': '' }, j.enabled
      ? 'Journal: this turn ' + bytesText(j.bytes) + ' · older turns ' + bytesText(older) + ' (' +
        (j.turns_kept || 0) + ' turns kept for undo)'
      : 'Journal: off'));
    for (const p of j.not_undoable || []) {
      out.push(el('div', { class: 'bad' }, 'cannot be undone: ', pathText(typeof p === 'string' ? p : (p.path || JSON.stringify(p)))));
    }
  }
  if (disk) {
    out.push(el('p', { class: 'muted', 'data-disk': '' }, 'Free on the disk: ' + bytesText(disk.free_bytes) +
      (disk.full ? '' : ' · reserve held for the journal: ' + bytesText(disk.reserve_bytes))));
  }
  if (out.length === 1) out.push(el('p', { class: 'muted' }, 'not reported'));
  return out;
}

function renderDaemon(d) {
  const section = el('section', { class: 'daemon', 'data-daemon': d.id });
  const s = d.status || {};
  const task = s.task || null;
  section.append(el('h2', {}, d.root ? pathText(d.root) : 'daemon at ' + d.socket),
    el('div', { class: 'muted' }, d.mountpoint ? 'mounted at ' : '', d.mountpoint ? pathText(d.mountpoint) : '',
      d.mountpoint ? ' · ' : '', 'socket ', pathText(d.socket), d.pid ? ' · pid ' + d.pid : ''));
  if (d.unreachable) {
    section.append(el('p', { class: 'bad' }, 'unreachable: ' + d.unreachable));
    return section;
  }
  if (s.error) {
    section.append(el('p', { class: 'bad' }, 'status refused: ' + (s.error.message || '')));
    return section;
  }
  section.append(el('p', {},
    task ? el('span', {}, 'task ', el('code', {}, task.task_id), ': ', words(task.description), ' — status ', el('b', {}, task.status))
      : el('span', { class: 'muted' }, 'no task'),
    ' · turn ' + s.turn + ' · ',
    el('button', { type: 'button', onclick: () => act(d.id, 'end-turn', {}) }, 'End turn')));

  // What this daemon's fleet bridge last said (status.md says the same).
  const fleet = s.fleet;
  if (fleet && fleet.centre) {
    const up = fleet.centre === 'reachable';
    section.append(el('p', { class: up ? 'good' : 'bad', 'data-centre': fleet.centre },
      'Fleet: the centre is ' + fleet.centre, fleet.detail ? ' (' : '', fleet.detail ? words(fleet.detail) : '',
      fleet.detail ? ')' : '', up ? '' : '; writes stay refused, and an approval here still works (audited as local)'));
  }

  const ask = s.ask || {};
  section.append(el('div', { class: 'actions' }, 'Ask mode: ',
    el('b', {}, ask.on ? 'on (a refused write waits ' + Math.round((ask.timeout_ms || 0) / 1000) + ' s)' : 'off'),
    ask.waiting ? ' · ' + ask.waiting + ' waiting' : '',
    el('button', { type: 'button', onclick: () => act(d.id, 'ask', { wait: ask.on ? 'off' : 'default' }) }, ask.on ? 'Ask mode off' : 'Ask mode on')));

  section.append(el('h3', {}, 'Pending requests'));
  const pending = s.pending_requests || [];
  if (!pending.length) section.append(el('p', { class: 'muted' }, 'none'));
  else {
    const table = el('table', {}, el('tr', {}, el('th', {}, 'id'), el('th', {}, 'paths'), el('th', {}, 'process'), el('th', {}, 'reason'), el('th', {}, '')));
    for (const r of pending) table.append(requestRow(d, section, r));
    section.append(table);
  }

  section.append(el('h3', {}, 'Grants in force'));
  const grants = s.grants || [];
  if (!grants.length) section.append(el('p', { class: 'muted' }, 'none'));
  else {
    const table = el('table', {}, el('tr', {}, el('th', {}, 'id'), el('th', {}, 'paths'), el('th', {}, 'ops'), el('th', {}, 'expires'), el('th', {}, 'reason'), el('th', {}, '')));
    for (const g of grants) {
      table.append(el('tr', { 'data-grant': g.id }, el('td', {}, el('code', {}, g.id)),
        el('td', {}, pathList(g.paths, '** (the whole tree)')),
        el('td', {}, (g.ops || []).join(', ')),
        el('td', {}, el('time', {}, g.expires_ms ? when(g.expires_ms) : 'end of turn')),
        el('td', { class: 'reason' }, words(g.reason || '')),
        el('td', {}, el('button', { type: 'button', onclick: () => act(d.id, 'revoke', { grant_id: g.id }) }, 'Revoke'))));
    }
    section.append(table);
  }
  section.append(grantForm(d, section));

  section.append(el('h3', {}, 'Changes this turn'));
  const diff = d.diff || {};
  if (diff.error) section.append(el('p', { class: 'muted' }, diff.error.message || ''));
  else if (!diff.text) section.append(el('p', { class: 'muted' }, 'no changes'));
  else section.append(diffBlock(diff.text));
  section.append(turnTools(d, section, s.turn || 0));

  section.append(el('h3', {}, 'Refusals (' + (s.refusals_total || 0) + ')'));
  const refusals = (s.recent_refusals || []).slice().reverse();
  if (!refusals.length) section.append(el('p', { class: 'muted' }, 'none'));
  else {
    const list = el('ol', { class: 'timeline' });
    for (const f of refusals) {
      list.append(el('li', { 'data-refusal': '' }, el('time', { class: 'muted' }, when(f.ts_ms)),
        el('span', { class: 'muted' }, ' · turn ' + (f.turn ?? '?') + ' '),
        el('b', {}, f.op || ''), ' ', pathText(f.path || ''),
        ' (' + (f.reason || '') + ', pid ' + (f.pid ?? '?') + ' ', el('code', {}, words(f.process || '')), ')'));
    }
    section.append(list);
  }

  const v = d['audit.verify'] || {};
  section.append(el('h3', {}, 'Audit chain'),
    v.error ? el('p', { class: 'muted' }, v.error.message || '')
      : el('p', { class: v.ok ? 'good' : 'bad' }, v.ok ? 'intact, ' + v.records + ' records'
        : 'BROKEN at line ' + (v.first_bad_line ?? '?') + ' (' + (v.records ?? '?') + ' records)'));
  section.append(...diskSpace(s));
  return section;
}

function notifyNew(snapshot) {
  for (const d of snapshot.daemons || []) {
    for (const r of (d.status && d.status.pending_requests) || []) {
      const key = d.id + '|' + r.id;
      if (seenRequests.has(key)) continue;
      seenRequests.add(key);
      if (!firstSnapshot && window.Notification && Notification.permission === 'granted') {
        new Notification('leasefs: ' + r.id + ' wants ' + (r.paths || []).join(', '), { body: r.reason || '' });
      }
    }
  }
  firstSnapshot = false;
}

function render(snapshot) {
  // What the person was typing survives the new snapshot.
  const typed = new Map();
  for (const node of daemonsBox.querySelectorAll('input[data-key]')) typed.set(node.dataset.key, node.value);
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  const sections = (snapshot.daemons || []).map(renderDaemon);
  if (!sections.length) sections.push(el('p', { class: 'muted' }, 'No leasefs daemon you may reach is running; new mounts show up here.'));
  daemonsBox.replaceChildren(...sections);
  for (const node of daemonsBox.querySelectorAll('input[data-key]')) {
    if (typed.has(node.dataset.key)) node.value = typed.get(node.dataset.key);
    if (focused && node.dataset.key === focused) node.focus();
  }
  notifyNew(snapshot);
}

document.getElementById('notify').addEventListener('click', () => {
  if (window.Notification) Notification.requestPermission();
});

const live = document.getElementById('live');
const events = new EventSource('/events');
events.onopen = () => { live.textContent = 'live'; live.className = 'good'; };
events.onerror = () => { live.textContent = 'reconnecting…'; live.className = 'bad'; };
events.onmessage = (e) => render(JSON.parse(e.data));
