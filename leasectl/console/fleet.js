// The fleet console's page. Every string from the ledger (roots, paths, reasons,
// command lines, task ids) was written by a machine and may have been chosen by
// its agent: the console sends it as `leasectl fleet requests` prints it (escapes
// for control and bidi characters), and the page only ever puts it in as text
// (textContent), never as markup.
'use strict';

const consoleToken = document.querySelector('meta[name="console-token"]').content;
const projectsBox = document.getElementById('projects');
const message = document.getElementById('message');

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

// As the daemons' console: UTC, saying so.
function when(ms) {
  if (typeof ms !== 'number') return '';
  const iso = new Date(ms).toISOString();
  return iso.slice(0, 10) + ' ' + iso.slice(11, 19) + ' UTC';
}

// Lines break between words (a path also after a '/'); a word too long for its
// column is cut with an ellipsis and shown whole on hover.
const kLongToken = 32;
function appendWords(node, text) {
  for (const part of String(text ?? '').split(/(\s+)/)) {
    if (!part) continue;
    if (/^\s/.test(part)) node.append(part);
    else if (part.length > kLongToken) node.append(el('span', { class: 'token', title: part }, part));
    else node.append(part.includes('-') ? el('span', { class: 'word' }, part) : part);
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

function say(text, bad) {
  message.textContent = text;
  message.className = bad ? 'bad' : 'good';
}

// One decision (or a batch), sent with the token in a header. What the ledger
// refuses (not delegated, decided already) is said as an error, never as done.
async function act(what, body) {
  let res;
  try {
    res = await fetch('/api/action', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Console-Token': consoleToken },
      body: JSON.stringify(body),
    });
  } catch (e) {
    say(what + ': the console does not answer (' + e + ')', true);
    return null;
  }
  if (!res.ok) {
    say(what + ': ' + (await res.text()), true);
    return null;
  }
  const reply = await res.json();
  if (!reply.ok) {
    const e = reply.error || {};
    say(what + ' refused: [' + (e.code || '?') + '] ' + (e.message || ''), true);
    return null;
  }
  const decided = (reply.result && reply.result.decided) || [];
  const verb = body.cmd === 'approve' ? 'approved' : 'rejected';
  say(verb + ' ' + (decided.length === 1 && body.id ? 'request ' + decided[0].request_id
    : decided.length + ' request(s), one decision each') + ' as ' + (reply.result.by || '?'), false);
  return reply.result;
}

// Inputs keep what the person typed across a re-render (keyed by data-key).
function input(key, placeholder, size) {
  return el('input', { type: 'text', 'data-key': key, placeholder, 'aria-label': placeholder, size: size || 20 });
}
function valueOf(key) {
  const node = projectsBox.querySelector('[data-key="' + CSS.escape(key) + '"]');
  return node ? node.value.trim() : '';
}

function requestRow(r) {
  const key = 'reason|' + r.id;
  const who = 'uid ' + (r.requester_uid || '?') + (r.requester_pid ? ' pid ' + r.requester_pid : '') +
    (r.requester_command ? ' ' + r.requester_command : '');
  const decide = (cmd) => () => {
    const body = { cmd, id: r.id };
    const reason = valueOf(key);
    if (reason) body.reason = reason;
    act(cmd + ' ' + r.id, body);
  };
  return el('tr', { 'data-request': r.id },
    el('td', {}, el('code', {}, r.id)),
    el('td', {}, el('code', {}, words(r.task_id)), el('div', { class: 'muted' }, 'turn ' + r.turn)),
    el('td', {}, (r.paths && r.paths.length) ? el('div', {}, ...r.paths.map(p => el('div', {}, pathText(p))))
      : el('code', {}, '** (the whole tree)')),
    el('td', {}, words((r.ops || []).join(', '))),
    el('td', {}, el('code', {}, words(who))),
    el('td', { class: 'reason' }, words(r.reason || '')),
    el('td', {}, el('div', { class: 'actions' },
      input(key, 'reason (optional)', 12),
      el('button', { type: 'button', onclick: decide('approve') }, 'Approve'),
      el('button', { type: 'button', onclick: decide('reject') }, 'Reject'))));
}

// Every pending request of the project whose paths are all under the prefix,
// one decision row each (the ledger decides which it may see).
function batchForm(p) {
  const key = 'prefix|' + p.id;
  const batch = (cmd) => () => {
    const prefix = valueOf(key);
    act(cmd + ' ' + (prefix ? 'under ' + prefix : 'all'), { cmd, project: p.id, path_prefix: prefix });
  };
  return el('div', { class: 'actions', 'data-batch': p.id },
    el('label', {}, 'Every pending request under ', input(key, 'path prefix (src)', 16)),
    el('button', { type: 'button', onclick: batch('approve') }, 'Approve all'),
    el('button', { type: 'button', onclick: batch('reject') }, 'Reject all'));
}

function renderProject(p, requests, refusals) {
  const section = el('section', { class: 'daemon', 'data-project': p.id });
  section.append(el('h2', {}, p.machine + ':', pathText(p.root)),
    el('div', { class: 'muted' }, 'project ' + p.id + ' · machine ' + p.machine));
  section.append(el('h3', {}, 'Pending requests (' + requests.length + ')'));
  if (!requests.length) section.append(el('p', { class: 'muted' }, 'none'));
  else {
    const table = el('table', {}, el('tr', {}, el('th', {}, 'id'), el('th', {}, 'task, turn'),
      el('th', {}, 'paths'), el('th', {}, 'ops'), el('th', {}, 'process'), el('th', {}, 'reason'), el('th', {}, '')));
    for (const r of requests) table.append(requestRow(r));
    section.append(table, batchForm(p));
  }
  section.append(el('h3', {}, 'Recent refusals'));
  if (!refusals.length) section.append(el('p', { class: 'muted' }, 'none shipped'));
  else {
    const list = el('ol', { class: 'timeline' });
    for (const f of refusals) {
      list.append(el('li', { 'data-refusal': f.seq }, el('time', { class: 'muted' }, when(f.ts_ms)),
        el('span', { class: 'muted' }, ' · turn ' + (f.turn || '?') + ' '),
        el('b', {}, f.op || ''), ' ', pathText(f.path || ''),
        ' (' + (f.reason || '') + ', uid ' + (f.uid || '?') + ' pid ' + (f.pid || '?') + ' ',
        el('code', {}, words(f.process || '')), ')'));
    }
    section.append(list);
  }
  return section;
}

function render(s) {
  document.getElementById('who').textContent = 'as ' + (s.user || '?');
  const centre = document.getElementById('centre');
  const c = s.centre || {};
  centre.textContent = c.reachable ? 'ledger reachable' : 'ledger unreachable: ' + (c.error || '');
  centre.className = c.reachable ? 'good' : 'bad';
  centre.dataset.reachable = c.reachable ? 'yes' : 'no';
  if (!c.reachable) return;  // the last list stays, under the warning
  const typed = new Map();
  for (const node of projectsBox.querySelectorAll('input[data-key]')) typed.set(node.dataset.key, node.value);
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  const projects = (s.projects || []).slice();
  const known = new Set(projects.map(p => p.id));
  for (const r of s.requests || []) {
    if (!known.has(r.project_id)) {
      known.add(r.project_id);
      projects.push({ id: r.project_id, machine: r.machine, root: r.root });
    }
  }
  const sections = projects.map(p => renderProject(p,
    (s.requests || []).filter(r => r.project_id === p.id),
    (s.refusals || []).filter(f => f.project_id === p.id)));
  if (!sections.length) {
    sections.push(el('p', { class: 'muted' }, 'No project is delegated to ' + (s.user || 'you') + ' in the ledger.'));
  }
  projectsBox.replaceChildren(...sections);
  for (const node of projectsBox.querySelectorAll('input[data-key]')) {
    if (typed.has(node.dataset.key)) node.value = typed.get(node.dataset.key);
    if (focused && node.dataset.key === focused) node.focus();
  }
}

const live = document.getElementById('live');
const events = new EventSource('/events');
events.onopen = () => { live.textContent = 'live'; live.className = 'good'; };
events.onerror = () => { live.textContent = 'reconnecting…'; live.className = 'bad'; };
events.onmessage = (e) => render(JSON.parse(e.data));
