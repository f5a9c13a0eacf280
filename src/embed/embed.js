/*! Feedback service embed: <script src="{base}/embed.js" data-widget="ID" async></script> (or data-form, data-poll). No dependencies. */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script) return;
  var base = new URL(script.src, location.href).origin;
  var kind = script.dataset.widget ? 'widget' : script.dataset.form ? 'form' : script.dataset.poll ? 'poll' : null;
  if (!kind) return;
  var id = script.dataset[kind];
  var api = base + '/api/' + kind + 's/' + encodeURIComponent(id);
  var token = null;
  var tokenAt = 0;
  var TOKEN_REFRESH_MS = 25 * 60 * 1000;

  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') el.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== false && attrs[k] != null) el.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) el.appendChild(c); });
    return el;
  }

  /** replaceChildren, skipping absent parts (it would print them as "null"). */
  function fill(parent, children) {
    parent.replaceChildren.apply(parent, children.filter(Boolean));
  }

  function request(url, options) {
    return fetch(url, options).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, status: r.status, body: body }; });
    });
  }

  function freshToken() {
    if (token && Date.now() - tokenAt < TOKEN_REFRESH_MS) return Promise.resolve(token);
    return request(api + '/token').then(function (r) {
      if (!r.ok) throw new Error(r.body.message);
      token = r.body.token;
      tokenAt = Date.now();
      return token;
    });
  }

  /** A stable, anonymous device hash: the same browser gives the same value, nothing is stored. */
  function fingerprint() {
    var parts = [navigator.userAgent, navigator.language, screen.width + 'x' + screen.height, screen.colorDepth, new Date().getTimezoneOffset(), navigator.hardwareConcurrency || ''];
    var hash = 2166136261;
    var text = parts.join('|');
    for (var i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
    return 'fp1-' + hash.toString(16);
  }

  /** Submits with a token, fetching a new one once if the server says it expired. */
  function send(path, body, retried) {
    return freshToken().then(function (t) {
      body._token = t;
      return request(api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    }).then(function (r) {
      if (!r.ok && r.body.code === 'invalid_token' && !retried) {
        token = null;
        return send(path, body, true);
      }
      return r;
    });
  }

  var CSS = ':host{all:initial;font:15px/1.4 system-ui,sans-serif;color:#1f2937}' +
    '*{box-sizing:border-box}.panel{background:var(--bg);border-radius:12px;box-shadow:0 10px 30px rgba(0,0,0,.18);padding:18px;width:min(360px,calc(100vw - 32px))}' +
    '.floating{position:fixed;z-index:2147483000;display:flex;flex-direction:column;gap:10px}' +
    '.bottom-right{right:16px;bottom:16px;align-items:flex-end}.bottom-left{left:16px;bottom:16px;align-items:flex-start}' +
    '.top-right{right:16px;top:16px;align-items:flex-end;flex-direction:column-reverse}.top-left{left:16px;top:16px;align-items:flex-start;flex-direction:column-reverse}' +
    'button{font:inherit;cursor:pointer;border-radius:8px;border:1px solid #d1d5db;background:#fff;padding:6px 10px;color:inherit}' +
    'button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible{outline:3px solid var(--primary);outline-offset:2px}' +
    '.launcher{background:var(--primary);color:#fff;border:0;border-radius:24px;padding:10px 16px;display:flex;gap:6px;align-items:center;box-shadow:0 4px 14px rgba(0,0,0,.2)}' +
    '.primary{background:var(--primary);color:#fff;border-color:var(--primary);margin-top:12px;width:100%;padding:9px}' +
    '.q{margin:12px 0;border:0;padding:0}.q legend,.q .title{font-weight:600;display:block;margin-bottom:6px}' +
    '.scale{display:flex;flex-wrap:wrap;gap:4px}.scale button[aria-pressed=true]{background:var(--primary);color:#fff;border-color:var(--primary)}' +
    'textarea,input[type=text],input[type=email],select{width:100%;font:inherit;padding:8px;border:1px solid #d1d5db;border-radius:8px}' +
    '.error{color:#b91c1c;font-size:13px;min-height:1em;margin-top:4px}.hp{position:absolute;left:-9999px;width:1px;height:1px;overflow:hidden}' +
    '.bar{height:8px;background:#e5e7eb;border-radius:4px;overflow:hidden}.bar span{display:block;height:100%;background:var(--primary)}' +
    'h2{font-size:17px;margin:0 0 4px}.close{float:right;border:0;background:transparent;font-size:20px;line-height:1;padding:0 4px}';
  /** 24×24 outline icons, so they look the same whatever fonts the visitor has. */
  var ICONS = {
    chat: 'M4 5h16v11H8l-4 4z',
    feedback: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
    help: 'M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6V14M12 17h.01',
    star: 'M12 3l2.8 5.7 6.2.9-4.5 4.4 1 6.2-5.5-2.9-5.5 2.9 1-6.2L3 9.6l6.2-.9z',
    heart: 'M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z',
  };
  function icon(name) {
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '18');
    svg.setAttribute('height', '18');
    svg.setAttribute('aria-hidden', 'true');
    var path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', ICONS[name] || ICONS.feedback);
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', 'currentColor');
    path.setAttribute('stroke-width', '2');
    path.setAttribute('stroke-linejoin', 'round');
    path.setAttribute('stroke-linecap', 'round');
    svg.appendChild(path);
    return svg;
  }

  function mount(object) {
    var host = h('div', { 'data-feedback-embed': kind });
    var root = host.attachShadow({ mode: 'open' });
    var theme = object.theme || {};
    host.style.setProperty('--primary', theme.primaryColor || '#4f46e5');
    host.style.setProperty('--bg', theme.backgroundColor || '#ffffff');
    root.appendChild(h('style', { text: CSS }));
    if (kind === 'widget') document.body.appendChild(host);
    else script.parentNode.insertBefore(host, script.nextSibling);
    return root;
  }

  /** One question: its control, a way to read its answer, and where its error goes. */
  function question(q, index) {
    var qid = 'q' + index;
    var error = h('div', { class: 'error', id: qid + '-error', 'aria-live': 'polite' });
    var value = function () { return undefined; };
    var control;
    var label = q.title + (q.required ? ' *' : '');
    function scale(from, to, name) {
      var chosen;
      var buttons = [];
      for (var n = from; n <= to; n++) (function (n) {
        var b = h('button', { type: 'button', 'aria-pressed': 'false', 'aria-label': name(n), text: q.type === 'star_rating' ? '\u2605' + n : String(n), onclick: function () {
          chosen = n;
          error.textContent = '';
          buttons.forEach(function (x) { x.setAttribute('aria-pressed', String(x === b)); });
        } });
        buttons.push(b);
      })(n);
      value = function () { return chosen; };
      return h('fieldset', { class: 'q', 'aria-describedby': qid + '-error' }, [h('legend', { text: label }), h('div', { class: 'scale', role: 'group' }, buttons), error]);
    }
    if (q.type === 'star_rating') return { el: scale(1, q.starRatingSettings.maxStars, function (n) { return n + ' of ' + q.starRatingSettings.maxStars + ' stars'; }), value: function () { return value(); }, error: error, q: q };
    if (q.type === 'nps') return { el: scale(0, 10, function (n) { return String(n) + ' of 10'; }), value: function () { return value(); }, error: error, q: q };
    if (q.type === 'single_choice' || q.type === 'severity') {
      var choices = q.type === 'severity' ? ['low', 'medium', 'high', 'critical'].map(function (c) { return { id: c, label: c[0].toUpperCase() + c.slice(1) }; }) : q.choices;
      control = h('select', { id: qid, 'aria-describedby': qid + '-error' }, [h('option', { value: '', text: '—' })].concat(choices.map(function (c) { return h('option', { value: c.id, text: c.label }); })));
      return { el: h('div', { class: 'q' }, [h('label', { class: 'title', for: qid, text: label }), control, error]), value: function () { return control.value || undefined; }, error: error, q: q };
    }
    if (q.type === 'consent') {
      control = h('input', { type: 'checkbox', id: qid, 'aria-describedby': qid + '-error' });
      return { el: h('div', { class: 'q' }, [h('span', { class: 'title', text: q.title }), h('label', { for: qid }, [control, document.createTextNode(' ' + q.text + (q.required ? ' *' : ''))]), error]), value: function () { return control.checked; }, error: error, q: q };
    }
    control = q.type === 'long_text'
      ? h('textarea', { id: qid, rows: '3', maxlength: '10000', 'aria-describedby': qid + '-error' })
      : h('input', { id: qid, type: q.type === 'email' ? 'email' : 'text', maxlength: '10000', 'aria-describedby': qid + '-error' });
    return { el: h('div', { class: 'q' }, [h('label', { class: 'title', for: qid, text: label }), control, error]), value: function () { return control.value.trim() || undefined; }, error: error, q: q };
  }

  function thanks(panel, object) {
    fill(panel, [h('h2', { text: object.thank_you_title || 'Thank you!', tabindex: '-1' }), h('p', { text: object.thank_you_message || '' })]);
    panel.firstChild.focus();
  }

  /** The questions of a widget or form, validated here before anything is sent. */
  function survey(panel, object, onClose) {
    var fields = object.questions.map(question);
    var honeypot = h('input', { type: 'text', name: 'website', tabindex: '-1', autocomplete: 'off' });
    var status = h('div', { class: 'error', 'aria-live': 'assertive' });
    var submit = h('button', { type: 'submit', class: 'primary', text: 'Send' });
    // An answer clears its question's error message at once.
    var clear = function (event) {
      fields.forEach(function (f) { if (f.el.contains(event.target)) f.error.textContent = ''; });
    };
    var form = h('form', { novalidate: true, oninput: clear, onchange: clear, onsubmit: function (event) {
      event.preventDefault();
      var answers = {};
      var first = null;
      fields.forEach(function (f) {
        var v = f.value();
        var missing = f.q.required && (v === undefined || v === false);
        f.error.textContent = missing ? (f.q.type === 'consent' ? 'Please give your consent to send this.' : 'Please answer this question.') : '';
        if (missing && !first) first = f.el.querySelector('input,textarea,select,button');
        if (v !== undefined && !(f.q.type === 'consent' && v === false && !f.q.required)) answers[f.q.id] = v;
      });
      if (first) { first.focus(); return; }
      submit.disabled = true;
      status.textContent = '';
      send('/submit', {
        answers: answers,
        _hp: honeypot.value,
        metadata: { pageUrl: location.href, pageTitle: document.title, fingerprint: fingerprint(), screenWidth: screen.width, screenHeight: screen.height, referrer: document.referrer || undefined },
      }).then(function (r) {
        submit.disabled = false;
        if (r.ok) return thanks(panel, object);
        status.textContent = r.body.message || 'Something went wrong.';
      }, function () {
        submit.disabled = false;
        status.textContent = 'Could not reach the server. Please try again.';
      });
    } }, fields.map(function (f) { return f.el; }).concat([h('div', { class: 'hp', 'aria-hidden': 'true' }, [honeypot]), submit, status]));
    fill(panel, [
      onClose ? h('button', { type: 'button', class: 'close', 'aria-label': 'Close', text: '\u00D7', onclick: onClose }) : null,
      h('h2', { text: object.title }),
      object.description ? h('p', { text: object.description }) : null,
      form,
    ]);
  }

  function results(panel, poll) {
    request(api + '/results').then(function (r) {
      if (!r.ok) return;
      fill(panel, [h('h2', { text: r.body.question, tabindex: '-1' }), h('p', { text: r.body.total_votes + ' votes' })]);
      r.body.options.forEach(function (o) {
        var bar = h('div', { class: 'bar', role: 'img', 'aria-label': o.text + ': ' + o.percentage + '%' }, [h('span', {})]);
        bar.firstChild.style.width = o.percentage + '%';
        panel.appendChild(h('div', { class: 'q' }, [h('div', { text: o.text + ' — ' + o.votes + ' (' + o.percentage + '%)' }), bar]));
      });
      panel.firstChild.focus();
    });
  }

  function ballot(panel, poll) {
    var type = poll.allow_multiple ? 'checkbox' : 'radio';
    var inputs = poll.options.map(function (o, i) {
      return h('input', { type: type, name: 'option', value: o.id, id: 'o' + i });
    });
    var status = h('div', { class: 'error', 'aria-live': 'assertive' });
    var honeypot = h('input', { type: 'text', tabindex: '-1', autocomplete: 'off' });
    var form = h('form', { onsubmit: function (event) {
      event.preventDefault();
      var chosen = inputs.filter(function (i) { return i.checked; }).map(function (i) { return i.value; });
      if (chosen.length === 0) { status.textContent = 'Please choose an option.'; inputs[0].focus(); return; }
      send('/vote', { option_ids: chosen, _hp: honeypot.value, metadata: { fingerprint: fingerprint() } }).then(function (r) {
        if (r.ok || r.body.code === 'duplicate_submission') return results(panel, poll);
        status.textContent = r.body.message || 'Something went wrong.';
      });
    } }, [h('fieldset', { class: 'q' }, [h('legend', { text: poll.question })].concat(poll.options.map(function (o, i) {
      return h('div', {}, [inputs[i], h('label', { for: 'o' + i, text: ' ' + o.text })]);
    }))), h('div', { class: 'hp', 'aria-hidden': 'true' }, [honeypot]), h('button', { type: 'submit', class: 'primary', text: 'Vote' }), status]);
    fill(panel, [form]);
  }

  /** The floating widget: a launcher, a panel, and the owner's trigger. */
  function widget(root, object) {
    var config = object.trigger_config;
    var box = h('div', { class: 'floating ' + config.position });
    var panel = h('div', { class: 'panel', role: 'dialog', 'aria-label': object.title, id: 'panel', hidden: true });
    var launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'panel', 'aria-label': config.text || object.title }, [
      icon(config.icon),
      config.showText && config.text ? h('span', { text: config.text }) : null,
    ]);
    var opened = false;
    function open() {
      if (!opened) { survey(panel, object, close); opened = true; }
      panel.hidden = false;
      launcher.setAttribute('aria-expanded', 'true');
      var first = panel.querySelector('button:not(.close),input,textarea,select');
      if (first) first.focus();
    }
    function close() {
      panel.hidden = true;
      launcher.setAttribute('aria-expanded', 'false');
      launcher.focus();
    }
    launcher.addEventListener('click', function () { if (panel.hidden) open(); else close(); });
    panel.addEventListener('keydown', function (event) { if (event.key === 'Escape') close(); });
    box.append(panel, launcher);
    root.appendChild(box);
    var fired = false;
    function trigger() { if (!fired) { fired = true; open(); } }
    if (config.triggerMode === 'time_delay') setTimeout(trigger, (config.timeDelay || 0) * 1000);
    if (config.triggerMode === 'scroll') {
      var onScroll = function () {
        var max = document.documentElement.scrollHeight - innerHeight;
        if (max <= 0 || (scrollY / max) * 100 >= config.scrollPercentage) { removeEventListener('scroll', onScroll); trigger(); }
      };
      addEventListener('scroll', onScroll, { passive: true });
    }
    if (config.triggerMode === 'exit_intent') {
      document.addEventListener('mouseout', function onOut(event) {
        if (!event.relatedTarget && event.clientY <= 0) { document.removeEventListener('mouseout', onOut); trigger(); }
      });
    }
  }

  request(api).then(function (r) {
    if (!r.ok || r.body.closed) return;
    var root = mount(r.body);
    if (kind === 'widget') return widget(root, r.body);
    var panel = h('div', { class: 'panel' });
    root.appendChild(panel);
    if (kind === 'form') survey(panel, r.body, null);
    else ballot(panel, r.body);
  });
})();
