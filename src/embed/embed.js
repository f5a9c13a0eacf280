/*! Feedback service embed: <div data-form="ID" style="min-height:…"></div> (or data-poll, data-widget) where it goes, and <script src="{base}/embed.js" async></script> once per page; or one tag per embed, drawn after itself: <script src="{base}/embed.js" data-widget="ID" async></script>. Optional on either: data-mode="light|dark|auto", data-remember="off", data-prefill-<question id>="answer". With data-preview it draws definitions handed to FeedbackEmbed.preview (or posted by the same-origin parent) and sends nothing. No dependencies. */
(function embed(script, container) {
  'use strict';
  if (!script) return;
  // A container (`<div data-form="…">`) is drawn into; a script tag of its own draws after itself.
  var data = (container || script).dataset;
  var previewing = 'preview' in data;
  var kind = data.widget ? 'widget' : data.form ? 'form' : data.poll ? 'poll' : null;
  if (!container && !previewing) whenParsed(function () { drawContainers(script, embed); });
  if (!kind && !previewing) return;
  var id = data[kind] || 'preview';
  // Where a preview draws, and the colour scheme it was asked for in place of data-mode.
  var previewTarget = null;
  var pageMode = data.mode;
  var base = new URL(script.src, location.href).origin;
  var api = base + '/api/' + kind + 's/' + encodeURIComponent(id);
  var token = null;
  var tokenAt = 0;
  var TOKEN_REFRESH_MS = 25 * 60 * 1000;
  var THANKS_CLOSE_MS = 5000;
  var memoryKey = 'feedback-embed:' + kind + ':' + id;

  /*
   * The visitor's language: the tag's data-lang, else a language the object
   * is written in (its own or a translation) matching the host page's
   * <html lang> or the browser's languages, else the object's own. English
   * is built in (EMBED_EN); another language's strings are a pack fetched
   * once per page, shared by every embed on it (each embed runs on its own).
   */
  var strings = EMBED_EN;
  // The object as the visitor reads it (a poll's results take its texts).
  var reading = {};
  var locale = 'en';
  var dir = 'ltr';
  var shownLanguage = null;
  var packs = document.feedbackEmbedLanguages || (document.feedbackEmbedLanguages = { loading: {}, loaded: { en: EMBED_EN } });
  var primary = function (tag) { return String(tag || '').toLowerCase().split(/[-_]/)[0]; };
  /** A tag's interface language: itself or its primary subtag when it has a pack; null otherwise. */
  function packOf(tag) {
    var lower = String(tag || '').toLowerCase();
    return EMBED_LANGUAGES.indexOf(lower) >= 0 ? lower : EMBED_LANGUAGES.indexOf(primary(lower)) >= 0 ? primary(lower) : null;
  }
  /** The language of the object's own or one of its translations that a tag asks for: the same tag first, else the same primary language. */
  function written(object, tag) {
    var has = [object.language || 'en'].concat(Object.keys(object.translations || {}));
    var lower = String(tag || '').toLowerCase();
    return has.filter(function (l) { return l.toLowerCase() === lower; })[0] || has.filter(function (l) { return primary(l) === primary(lower); })[0] || null;
  }
  function chooseLanguage(object) {
    if (data.lang) return data.lang;
    // The service's hosted page says nothing of the visitor: only their browser does.
    var wanted = (container && 'hosted' in container.dataset ? [] : [document.documentElement.lang]).concat(navigator.languages || [navigator.language]);
    for (var i = 0; i < wanted.length; i++) if (wanted[i] && written(object, wanted[i])) return written(object, wanted[i]);
    return object.language || 'en';
  }
  function loadPack(code) {
    if (packs.loaded[code]) return Promise.resolve(packs.loaded[code]);
    return packs.loading[code] || (packs.loading[code] = request(base + '/embed/lang/' + code + '.json').then(function (r) {
      if (!r.ok) throw r;
      return (packs.loaded[code] = r.body);
    }).catch(function () {
      warn('no ' + code + ' strings; showing English');
      return (packs.loaded[code] = EMBED_EN);
    }));
  }
  /** Takes the language's strings, direction and number formats; answers the object in that language (the object's own text where a translation has none). */
  function use(object, lang, pack) {
    var code = pack === EMBED_EN ? 'en' : packOf(lang);
    strings = pack;
    dir = EMBED_RTL.indexOf(code) >= 0 ? 'rtl' : 'ltr';
    try { locale = Intl.getCanonicalLocales(lang)[0]; } catch (e) { locale = code; }
    shownLanguage = written(object, lang) || object.language || 'en';
    return (reading = translated(object, shownLanguage));
  }
  /** The object in its language `lang` (fetching that language's pack first when it needs one). */
  function localize(object, lang) {
    lang = lang || chooseLanguage(object);
    return loadPack(packOf(lang) || 'en').then(function (pack) { return use(object, lang, pack); });
  }
  /** The object with a translation's texts in place of its own, by id; what the translation leaves out stays as written. */
  function translated(object, lang) {
    var tr = (object.translations || {})[lang];
    if (!tr || lang === object.language) return object;
    var over = function (target, source, keys) { keys.forEach(function (k) { if (source[k]) target[k] = source[k]; }); return target; };
    var labels = function (items, names, field) { return names ? items.map(function (x) { var o = Object.assign({}, x); if (names[x.id]) o[field] = names[x.id]; return o; }) : items; };
    var o = over(Object.assign({}, object), tr, ['title', 'description', 'thank_you_title', 'thank_you_message', 'question']);
    if (object.questions) o.questions = object.questions.map(function (q) {
      var t = (tr.questions || {})[q.id];
      if (!t) return q;
      var c = over(Object.assign({}, q), t, ['title', 'description', 'start_label', 'end_label', 'text']);
      ['choices', 'rows', 'columns'].forEach(function (k) { if (q[k]) c[k] = labels(q[k], t[k], 'label'); });
      return c;
    });
    if (object.endings) o.endings = object.endings.map(function (e) { var t = (tr.endings || {})[e.id]; return t ? over(Object.assign({}, e), t, ['title', 'message']) : e; });
    if (object.options) o.options = labels(object.options, tr.options, 'text');
    return o;
  }
  /** An interface string in the visitor's language, `{name}` filled in: numbers as the language writes them, a count's word by its plural rule. */
  function say(key, vars) {
    vars = vars || {};
    var s = strings[key] != null ? strings[key] : EMBED_EN[key];
    if (typeof s === 'object') s = s[rule(vars.total != null ? vars.total : vars.n)] || s.other;
    return s.replace(/\{(\w+)\}/g, function (_, k) { return typeof vars[k] === 'number' ? number(vars[k]) : vars[k]; });
  }
  function rule(n) { try { return new Intl.PluralRules(locale).select(n); } catch (e) { return 'other'; } }
  function number(n, options) { try { return new Intl.NumberFormat(locale, options).format(n); } catch (e) { return String(n); } }
  var percent = function (p) { return number(p / 100, { style: 'percent', maximumFractionDigits: 1 }); };

  /*
   * Displays and starts, reported once per visit each: `display` when a form
   * or poll has been at least half in view for a second or a widget's panel
   * opens, `start` at the first answer. The visit's session is a random id
   * drawn once per page visit and kept in sessionStorage, so a reload in the
   * same visit counts once. Nothing is sent in a preview.
   */
  var signalled = {};
  var SESSION_KEY = 'feedback-embed:session';
  function signal(type) {
    if (previewing || signalled[type]) return;
    signalled[type] = true;
    var session = null;
    var key = 'feedback-embed:signalled:' + kind + ':' + id + ':' + type;
    try {
      if (sessionStorage.getItem(key)) return;
      session = sessionStorage.getItem(SESSION_KEY);
      if (!session) sessionStorage.setItem(SESSION_KEY, (session = sessionId()));
      sessionStorage.setItem(key, '1');
    } catch (e) { session = session || sessionId(); }
    freshToken().then(function (t) {
      return fetch(api + '/events', {
        method: 'POST',
        keepalive: true,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ _token: t, type: type, session: session, metadata: { pageUrl: location.href, referrer: document.referrer || undefined } }),
      });
    }).catch(function () { /* a count lost, never the visitor's answer */ });
  }
  function sessionId() {
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return [].map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }
  /** `display` once the element has been at least half in view for a second; `start` at the first answer given in it. */
  function signalWhenSeen(el) {
    if (previewing) return;
    var timer = null;
    if (typeof IntersectionObserver === 'function') {
      var seen = new IntersectionObserver(function (entries) {
        var half = entries[entries.length - 1].intersectionRatio >= 0.5;
        if (half && !timer) timer = setTimeout(function () { seen.disconnect(); signal('display'); }, 1000);
        else if (!half && timer) { clearTimeout(timer); timer = null; }
      }, { threshold: [0, 0.5, 1] });
      seen.observe(el);
    } else signal('display');
  }
  function signalStarts(el) {
    var first = function () { signal('start'); };
    el.addEventListener('input', first);
    el.addEventListener('change', first);
  }

  /** One line per embed that cannot show, so an owner looking at the console learns why. */
  function warn(reason) {
    console.warn('Feedback embed (' + kind + ' ' + id + '): ' + reason);
  }

  /** What this browser remembers of the object: 'dismissed', 'answered' or 'voted'. Private modes may refuse storage. */
  function recall() {
    try { return data.remember === 'off' || previewing ? null : localStorage.getItem(memoryKey); } catch (e) { return null; }
  }
  function remember(what) {
    try { if (data.remember !== 'off' && !previewing) localStorage.setItem(memoryKey, what); } catch (e) { /* nothing to remember with */ }
  }

  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') el.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== false && attrs[k] != null) el.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return el;
  }

  /** replaceChildren, skipping absent parts (it would print them as "null"). */
  function fill(parent, children) {
    parent.replaceChildren.apply(parent, children.filter(Boolean));
  }

  /** A reply whatever its body; rejects only when the server cannot be reached. */
  function request(url, options) {
    return fetch(url, options).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) { return { ok: r.ok, status: r.status, body: body || {} }; });
    });
  }

  function fetchToken() {
    return request(api + '/token').then(function (r) {
      if (!r.ok) throw r;
      token = r.body.token;
      tokenAt = Date.now();
      return token;
    });
  }

  function freshToken() {
    return token && Date.now() - tokenAt < TOKEN_REFRESH_MS ? Promise.resolve(token) : fetchToken();
  }

  /** A stable, anonymous device hash: the same browser gives the same value, nothing is stored. */
  function fingerprint() {
    var parts = [navigator.userAgent, navigator.language, screen.width + 'x' + screen.height, screen.colorDepth, new Date().getTimezoneOffset(), navigator.hardwareConcurrency || ''];
    var hash = 2166136261;
    var text = parts.join('|');
    for (var i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
    return 'fp1-' + hash.toString(16);
  }

  /**
   * JSON of the body whatever the host page did to Array.prototype: pages
   * with old Prototype.js give arrays a toJSON that JSON.stringify would
   * turn into a string of JSON, which the API refuses.
   */
  function json(value) {
    var proto = Array.prototype;
    var own = Object.prototype.hasOwnProperty.call(proto, 'toJSON');
    var saved = proto.toJSON;
    if (own) delete proto.toJSON;
    try {
      return JSON.stringify(value);
    } finally {
      if (own) proto.toJSON = saved;
    }
  }

  /** Submits with a token, fetching a new one once if the server says it expired. */
  function send(path, body, retried) {
    return freshToken().then(function (t) {
      body._token = t;
      return request(api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json(body) });
    }, function (r) {
      if (r && r.body) return r;
      throw r;
    }).then(function (r) {
      if (!r.ok && r.body.code === 'invalid_token' && !retried) {
        token = null;
        return send(path, body, true);
      }
      return r;
    });
  }

  /** 0–255 channels of any CSS colour, as the browser reads it; white when it cannot. */
  function channels(colour) {
    var ctx = document.createElement('canvas').getContext('2d');
    if (!ctx) return [255, 255, 255];
    ctx.fillStyle = '#fff';
    ctx.fillStyle = colour;
    var v = ctx.fillStyle;
    if (v[0] === '#') return [1, 3, 5].map(function (i) { return parseInt(v.substr(i, 2), 16); });
    var n = v.match(/[\d.]+/g).map(Number);
    // A see-through colour over white, as most pages are.
    return n.slice(0, 3).map(function (c) { return c * n[3] + 255 * (1 - n[3]); });
  }
  function luminance(colour) {
    var c = channels(colour).map(function (x) { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function contrast(a, b) {
    var x = luminance(a) + 0.05;
    var y = luminance(b) + 0.05;
    return x > y ? x / y : y / x;
  }
  /** The first candidate that reads on the background at 4.5:1; the best one when none does. */
  function readable(background, candidates) {
    var best = candidates[0];
    for (var i = 0; i < candidates.length; i++) {
      if (contrast(candidates[i], background) >= 4.5) return candidates[i];
      if (contrast(candidates[i], background) > contrast(best, background)) best = candidates[i];
    }
    return best;
  }

  /** The colours the embed paints with, as the theme's mode, the page's data-mode and the visitor's preference say. */
  function palette(theme) {
    var mode = pageMode || theme.mode || 'light';
    var dark = mode === 'dark' || (mode === 'auto' && matchMedia('(prefers-color-scheme: dark)').matches);
    var primary = theme.primaryColor || '#4f46e5';
    var bg = dark ? '#111827' : theme.backgroundColor || '#ffffff';
    var fg = dark ? '#f9fafb' : theme.text_color || readable(bg, ['#111827', '#ffffff', '#000000']);
    return {
      '--bg': bg,
      '--fg': fg,
      '--primary': primary,
      '--on-primary': readable(primary, ['#ffffff', '#111827', '#000000']),
      '--err': readable(bg, ['#b91c1c', '#fca5a5', fg]),
      'color-scheme': luminance(bg) < 0.2 ? 'dark' : 'light',
    };
  }

  /*
   * Everything the host page could pass down to the embed is reset at the
   * shadow host. !important there wins over the page's own !important, as
   * the inner context's does; page selectors cannot reach inside the root.
   */
  var CSS = ':host{all:initial!important;display:block!important;font:400 16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif!important;color:#111827!important;text-align:start!important;direction:ltr!important}' +
    '*{box-sizing:border-box}[hidden]{display:none!important}svg{fill:none;stroke:currentColor;stroke-width:2;stroke-linejoin:round;stroke-linecap:round;flex:none}' +
    '.panel{background:var(--bg);color:var(--fg);border-radius:12px;display:flex;flex-direction:column;overflow-wrap:anywhere;--line:color-mix(in srgb,var(--fg) 45%,var(--bg))}' +
    '.inline{width:100%;max-width:560px;border:1px solid var(--line)}' +
    '.box{position:fixed;z-index:2147483000;display:flex;flex-direction:column;gap:12px;align-items:flex-end;--x:max(16px,env(safe-area-inset-right));--y:calc(max(16px,env(safe-area-inset-bottom)) + var(--off))}' +
    '.left{left:max(16px,env(safe-area-inset-left));align-items:flex-start}.right{right:var(--x)}.bottom{bottom:var(--y)}' +
    '.top{top:calc(max(16px,env(safe-area-inset-top)) + var(--off));flex-direction:column-reverse}' +
    '.box .panel{box-shadow:0 10px 30px rgba(0,0,0,.25);width:min(380px,calc(var(--visible-width,100vw) - 32px));max-height:calc(100vh - 92px - var(--off));max-height:calc(100dvh - 92px - var(--off) - env(safe-area-inset-top) - env(safe-area-inset-bottom))}' +
    '.head{display:flex;align-items:flex-start;gap:4px;padding-block:8px 0;padding-inline:18px 4px}.head h2{flex:1;margin:10px 0 4px}' +
    '.body{overflow-y:auto;overscroll-behavior:contain;padding:0 18px 18px}.inline .body{padding-top:18px}' +
    'h1,h2{font-size:18px;line-height:1.3;margin:0 0 4px}h3{font-size:16px}p{margin:0 0 12px}' +
    'button{font:inherit;color:inherit;cursor:pointer;border-radius:8px;border:1px solid var(--line);background:transparent;min-height:44px;padding:8px 14px}' +
    ':focus-visible,input:focus-visible+span{outline:3px solid var(--primary);outline-offset:2px}' +
    '.launcher{background:var(--primary);color:var(--on-primary);border:0;border-radius:24px;min-height:48px;min-width:48px;display:flex;gap:6px;align-items:center;justify-content:center;box-shadow:0 4px 14px rgba(0,0,0,.25)}' +
    '.primary{background:var(--primary);color:var(--on-primary);border-color:var(--primary);width:100%;font-weight:600}' +
    '.close{border:0;width:44px;height:44px;padding:10px;flex:none}' +
    '.q{margin:0 0 16px;border:0;padding:0;min-width:0}.label{display:block;font-weight:600;margin:0 0 6px;padding:0}.req{color:var(--err);padding-inline-start:2px}' +
    'input:not([type=radio]):not([type=checkbox]),textarea,select{display:block;width:100%;font:inherit;font-size:16px;color:inherit;background:transparent;min-height:44px;padding:9px 12px;border:1px solid var(--line);border-radius:8px;margin:0}' +
    'select option{color:#111827;background:#fff}' +
    '[aria-invalid=true]{border:2px solid var(--err)!important}' +
    '.scale{display:flex;gap:4px}.scale label{flex:1 1 0;min-width:0;position:relative;max-width:56px}.stars label{flex:0 1 44px}' +
    '.scale input{position:absolute;inset:0;opacity:0;margin:0;width:100%;height:100%;cursor:pointer}' +
    '.scale span{display:flex;align-items:center;justify-content:center;min-height:44px;border:1px solid var(--line);border-radius:8px;font-size:15px}' +
    '.scale input:checked+span{background:var(--primary);color:var(--on-primary);border-color:var(--primary)}' +
    '.scale input[aria-invalid=true]+span{border-color:var(--err)}' +
    '.stars span,.stars input:checked+span{border:0;background:none}.stars svg{fill:none;stroke:var(--fg)}.stars .lit svg{fill:var(--primary);stroke:var(--primary)}' +
    '.ends{display:flex;justify-content:space-between;gap:12px;font-size:14px;margin-top:4px}.ends span:last-child{text-align:end}' +
    '.check{display:flex;gap:10px;align-items:flex-start;min-height:44px;padding:10px 0;cursor:pointer}' +
    '.check input{width:24px;height:24px;margin:0;flex:none;accent-color:var(--primary)}' +
    '.desc{margin:0 0 8px;font-size:14px}.opts{display:flex;flex-direction:column}.row{border:0;padding:0;margin:0 0 8px;min-width:0}.row legend{padding:0;margin-bottom:4px}' +
    '.pills{flex-direction:row;flex-wrap:wrap;gap:6px}.pills label{position:relative;flex:1 1 auto}.pills input{position:absolute;inset:0;opacity:0;margin:0;width:100%;height:100%;cursor:pointer}' +
    '.pills span{display:flex;align-items:center;justify-content:center;min-height:44px;padding:0 12px;border:1px solid var(--line);border-radius:8px}.pills input:checked+span{background:var(--primary);color:var(--on-primary);border-color:var(--primary)}' +
    '.rank{list-style:none;margin:0;padding:0}.rank li{display:flex;align-items:center;gap:6px;border:1px solid var(--line);border-radius:8px;padding:4px;padding-inline-start:12px;margin-bottom:6px;cursor:grab}.rank .grow{flex:1}.rank button{min-width:44px;padding:0}' +
    '.error{color:var(--err);font-size:14px;margin-top:4px}.error:empty{display:none}' +
    // Hidden in place (clipped), not moved off screen: moved, it widened the host page by 10,000 px when their directions differ.
    '.hp{position:absolute;width:1px;height:1px;margin:-1px;padding:0;border:0;overflow:hidden;clip-path:inset(50%);white-space:nowrap}' +
    '.bar{height:8px;background:var(--line);border-radius:4px;overflow:hidden;margin-top:4px}.bar span{display:block;height:100%;background:var(--primary)}' +
    '.nav{display:flex;gap:8px}.nav .primary{flex:1}.page{margin:12px 0}.page:focus{outline:0}' +
    '.obo .check span[data-key]::before{content:attr(data-key)/"";display:inline-block;min-width:24px;margin-inline-end:8px;border:1px solid var(--line);border-radius:4px;text-align:center;font-size:13px}' +
    '.link{border:0;padding:8px 0;text-decoration:underline;width:100%}' +
    '.note{font-size:14px;margin:12px 0 0;padding:8px 12px;border-radius:8px;border:1px dashed var(--line)}' +
    // A widget's panel opens beside its launcher, out of the corner box's flow: the box keeps its place, so nothing shifts.
    '.box .panel{position:absolute;bottom:calc(100% + 12px);right:0}.box.left .panel{right:auto;left:0}.box.top .panel{bottom:auto;top:calc(100% + 12px)}';

  /** 24×24 outline icons, so they look the same whatever fonts the visitor has. */
  var ICONS = {
    chat: 'M4 5h16v11H8l-4 4z',
    feedback: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
    help: 'M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6V14M12 17h.01',
    star: 'M12 3l2.8 5.7 6.2.9-4.5 4.4 1 6.2-5.5-2.9-5.5 2.9 1-6.2L3 9.6l6.2-.9z',
    heart: 'M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z',
    close: 'M6 6l12 12M18 6L6 18',
  };
  function icon(name, size) {
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', size || '20');
    svg.setAttribute('height', size || '20');
    svg.setAttribute('aria-hidden', 'true');
    var path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', ICONS[name] || ICONS.feedback);
    svg.appendChild(path);
    return svg;
  }

  var painted = [];
  var listening = false;
  function paint(item) {
    var colours = palette(item.theme);
    for (var k in colours) item.el.style.setProperty(k, colours[k]);
    return item.el;
  }

  /**
   * The shadow root and the element that carries the colours (page selectors
   * cannot reach it). A constructed sheet, where the browser has them, is
   * CSSOM, which a page's `style-src` policy leaves alone; a <style> element
   * otherwise.
   */
  function mount(theme, attrs) {
    var host = h('div', attrs);
    var root = host.attachShadow({ mode: 'open' });
    try {
      var sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } catch (e) {
      root.appendChild(h('style', { text: CSS }));
    }
    if (previewTarget) previewTarget.appendChild(host);
    else if (kind === 'widget') document.body.appendChild(host);
    else if (container) container.appendChild(host);
    else script.parentNode.insertBefore(host, script.nextSibling);
    // `auto` follows the visitor switching their system's scheme while the page is open.
    if (!listening) matchMedia('(prefers-color-scheme: dark)').addEventListener('change', function () { painted.forEach(paint); });
    listening = true;
    return {
      host: host,
      root: root,
      paint: function (el) { var item = { el: el, theme: theme }; painted.push(item); return paint(item); },
    };
  }

  /** The asterisk of a required question, joined to its last word (U+2060) so it never wraps alone; `required` tells assistive technology. */
  var REQUIRED = function () { return h('span', { class: 'req', 'aria-hidden': 'true', text: '\u2060*' }); };

  /** A question's title (with its asterisk) and description, the id its description goes by. */
  function titled(q, qid, tag, attrs) {
    return [h(tag, Object.assign({ class: 'label' }, attrs), [q.title, q.required ? REQUIRED() : null]), q.description ? h('p', { class: 'desc', id: qid + '-desc', text: q.description }) : null];
  }
  /** A fieldset of radios or checkboxes, one per option, each a real input inside its label. */
  function group(q, qid, options, type, cls) {
    // One at a time, a key picks each option: a scale's digit, Y or N, else A, B, C…
    var key = function (o, i) { return !q.type ? null : q.type === 'yes_no' ? o.id.toUpperCase() : typeof o.id === 'number' ? (o.id < 10 ? String(o.id) : null) : i < 26 ? String.fromCharCode(65 + i) : null; };
    var inputs = options.map(function (o, i) { return h('input', { type: type, name: qid, value: String(o.id), 'data-key': key(o, i) }); });
    return {
      el: h('fieldset', { class: 'q' }, titled(q, qid, 'legend').concat([h('div', { class: cls || 'opts' }, options.map(function (o, i) {
        return h('label', { class: cls ? null : 'check' }, [inputs[i], h('span', { text: o.label, 'data-key': cls ? null : key(o, i) })]);
      }))])),
      controls: inputs,
      picked: function () { return inputs.filter(function (i) { return i.checked; }).map(function (i) { return options[inputs.indexOf(i)].id; }); },
    };
  }
  /** A row of radios (stars, NPS, scales, yes/no): arrow keys move the choice, as in any radio group. */
  function scale(q, qid, values, name, stars, ends) {
    var f = group(q, qid, values.map(function (v) { return { id: v, label: name(v) }; }), 'radio', 'scale' + (stars ? ' stars' : ''));
    f.controls.forEach(function (radio, i) {
      var span = radio.nextSibling;
      radio.setAttribute('aria-label', span.textContent);
      span.setAttribute('aria-hidden', 'true');
      if (stars) fill(span, [icon('star', '28')]);
      else span.textContent = number(values[i]);
      radio.addEventListener('change', function () { f.controls.forEach(function (r, j) { r.nextSibling.className = stars && j <= i ? 'lit' : ''; }); });
    });
    if (ends) f.el.appendChild(h('div', { class: 'ends', 'aria-hidden': 'true' }, [h('span', { text: ends[0] }), h('span', { text: ends[1] })]));
    f.value = function () { var p = f.picked(); return p.length ? p[0] : undefined; };
    return f;
  }
  var range = function (from, to) { var out = []; for (var n = from; n <= to; n++) out.push(n); return out; };

  /** A ranking: an ordered list; each item moves by its buttons (keyboard) or by dragging. */
  function ranking(q, qid) {
    var order = (q.choices || []).slice();
    var touched = false;
    var list = h('ol', { class: 'rank' });
    var live = h('div', { class: 'hp', 'aria-live': 'polite' });
    var dragged = null;
    function move(from, to, focusDir) {
      if (to < 0 || to >= order.length) return;
      order.splice(to, 0, order.splice(from, 1)[0]);
      touched = true;
      draw();
      live.textContent = order[to].label + ', ' + say('n_of', { n: to + 1, total: order.length });
      var b = list.children[to].querySelector(focusDir < 0 && to > 0 || to === order.length - 1 ? '.up' : '.down') || list.children[to].querySelector('button');
      b.focus();
      list.dispatchEvent(new Event('change', { bubbles: true }));
    }
    function draw() {
      fill(list, order.map(function (c, i) {
        return h('li', { draggable: 'true', ondragstart: function () { dragged = i; }, ondragover: function (e) { e.preventDefault(); }, ondrop: function (e) { e.preventDefault(); if (dragged !== null) move(dragged, i, 0); dragged = null; } }, [
          h('span', { class: 'n', text: (i + 1) + '.' }), h('span', { class: 'grow', text: c.label }),
          h('button', { type: 'button', class: 'up', 'aria-label': say('move_up', { label: c.label }), disabled: i === 0, text: '\u2191', onclick: function () { move(i, i - 1, -1); } }),
          h('button', { type: 'button', class: 'down', 'aria-label': say('move_down', { label: c.label }), disabled: i === order.length - 1, text: '\u2193', onclick: function () { move(i, i + 1, 1); } }),
        ]);
      }));
    }
    draw();
    return {
      el: h('fieldset', { class: 'q' }, titled(q, qid, 'legend').concat([list, live])),
      controls: [],
      focus: function () { list.querySelector('button:not([disabled])').focus(); },
      value: function () { return touched || q.required ? order.map(function (c) { return c.id; }) : undefined; },
    };
  }

  /** A matrix: one radio group per row, its columns wrapping as a phone needs. */
  function matrix(q, qid) {
    var rows = (q.rows || []).map(function (r, i) { return { r: r, f: group({ title: r.label }, qid + 'r' + i, q.columns || [], 'radio', 'opts pills') }; });
    return {
      el: h('fieldset', { class: 'q' }, titled(q, qid, 'legend').concat(rows.map(function (x) { x.f.el.className = 'row'; return x.f.el; }))),
      controls: [].concat.apply([], rows.map(function (x) { return x.f.controls; })),
      value: function () {
        var out = {};
        rows.forEach(function (x) { var p = x.f.picked(); if (p.length) out[x.r.id] = p[0]; });
        return Object.keys(out).length ? out : undefined;
      },
      missing: function () { return rows.some(function (x) { return !x.f.picked().length; }); },
    };
  }

  /** A text-like input: its type, keyboard, autocomplete, and how its text becomes an answer. */
  var INPUTS = {
    // Addresses, numbers and links read left to right in every language (an Arabic page showed https:// as //:https).
    email: { type: 'email', autocomplete: 'email', dir: 'ltr' },
    phone: { type: 'tel', autocomplete: 'tel', dir: 'ltr' },
    url: { type: 'url', inputmode: 'url', placeholder: 'https://', dir: 'ltr' },
    number: { type: 'number', inputmode: 'decimal', read: function (v) { return v === '' ? undefined : Number(v); } },
    date: { type: 'date' },
  };

  /** How each question type is drawn; every other type is a text input. */
  var RENDER = {
    star_rating: function (q, qid) {
      var max = (q.starRatingSettings || {}).maxStars || 5;
      return scale(q, qid, range(1, max), function (n) { return say('stars', { n: n, total: max }); }, true);
    },
    nps: function (q, qid) { return scale(q, qid, range(0, 10), function (n) { return say('out_of', { n: n, total: 10 }); }, false, [number(0) + ' · ' + say('not_likely'), say('very_likely') + ' · ' + number(10)]); },
    opinion_scale: function (q, qid) {
      return scale(q, qid, range(q.start, q.end), function (n) { return say('n_of', { n: n, total: q.end }) + (n === q.start && q.start_label ? ', ' + q.start_label : n === q.end && q.end_label ? ', ' + q.end_label : ''); }, false,
        q.start_label || q.end_label ? [number(q.start) + ' · ' + (q.start_label || ''), (q.end_label || '') + ' · ' + number(q.end)] : null);
    },
    yes_no: function (q, qid) {
      var f = group(q, qid, [{ id: 'y', label: say('yes') }, { id: 'n', label: say('no') }], 'radio', 'opts pills');
      f.value = function () { var p = f.picked(); return p.length ? p[0] === 'y' : undefined; };
      return f;
    },
    multiple_choice: function (q, qid) {
      var f = group(q, qid, q.choices || [], 'checkbox');
      f.value = function () { var p = f.picked(); return p.length ? p : undefined; };
      return f;
    },
    ranking: ranking,
    matrix: matrix,
    statement: function (q, qid) { return { el: h('div', { class: 'q' }, [h('h3', { class: 'label', text: q.title }), q.description ? h('p', { class: 'desc', text: q.description }) : null]), controls: [], value: function () {} }; },
    consent: function (q, qid) {
      var box = h('input', { type: 'checkbox', id: qid, required: q.required });
      return {
        el: h('div', { class: 'q' }, [h('span', { class: 'label', text: q.title }), h('label', { class: 'check', for: qid }, [box, h('span', {}, [q.text, q.required ? REQUIRED() : null])])]),
        controls: [box],
        value: function () { return box.checked; },
      };
    },
  };

  /** One question: its element, its controls, a way to read its answer, and where its error goes. */
  function question(q, index) {
    var qid = 'q' + index;
    var field;
    var choices = q.type === 'severity' ? ['low', 'medium', 'high', 'critical'].map(function (c) { return { id: c, label: say(c) }; }) : q.choices || [];
    if (RENDER[q.type]) field = RENDER[q.type](q, qid);
    else if (q.type === 'single_choice' && (q.display === 'radio' || (!q.display && choices.length <= 6))) {
      field = group(q, qid, choices, 'radio');
      field.value = function () { return field.picked()[0]; };
    } else {
      var control;
      var kind = INPUTS[q.type] || {};
      if (q.type === 'single_choice' || q.type === 'severity') {
        control = h('select', { id: qid }, [h('option', { value: '', text: '—' })].concat(choices.map(function (c) { return h('option', { value: c.id, text: c.label }); })));
      } else if (q.type === 'long_text') {
        control = h('textarea', { id: qid, rows: '3', maxlength: q.max_length || '10000' });
      } else {
        control = h('input', { id: qid, type: kind.type || 'text', dir: kind.dir, inputmode: kind.inputmode, placeholder: kind.placeholder, autocomplete: kind.autocomplete, maxlength: kind.type ? null : q.max_length || '10000', min: q.min, max: q.max, step: q.type === 'number' ? (q.integer ? '1' : 'any') : null });
      }
      control.required = q.required;
      field = {
        el: h('div', { class: 'q' }, titled(q, qid, 'label', { for: qid }).concat([control])),
        controls: [control],
        value: function () { var v = control.value.trim(); return kind.read ? kind.read(v) : v || undefined; },
      };
    }
    field.q = q;
    field.error = h('div', { class: 'error', id: qid + '-error' });
    field.el.appendChild(field.error);
    // The description and the error describe the group (fieldset) or the one control.
    var described = (q.description ? qid + '-desc ' : '') + qid + '-error';
    (field.el.tagName === 'FIELDSET' ? [field.el] : field.controls).forEach(function (c) { c.setAttribute('aria-describedby', described); });
    /** A message at the field, or none; the controls say whether they are invalid. */
    field.show = function (message) {
      field.error.textContent = message || '';
      field.controls.forEach(function (c) { if (message) c.setAttribute('aria-invalid', 'true'); else c.removeAttribute('aria-invalid'); });
    };
    return field;
  }

  /** The declared hidden fields' values: `data-hidden-<name>` on the container (or the tag that draws itself) wins over the host page's `?<name>=`. */
  function hiddenValues(object) {
    var out = {};
    var query = new URLSearchParams(location.search);
    (object.hidden_fields || []).forEach(function (name) {
      var v = (container || script).getAttribute('data-hidden-' + name);
      if (v === null) v = query.get(name);
      if (v) out[name] = v.slice(0, 500);
    });
    return out;
  }

  /** The redirect with `{{question id}}` and `{{hidden name}}` filled in, URL-encoded (empty when absent); only http(s). */
  function redirectTo(object, answers, hidden) {
    var url = (object.redirect_url || '').replace(/\{\{([A-Za-z0-9_-]+)\}\}/g, function (_, name) {
      var v = Object.prototype.hasOwnProperty.call(answers, name) ? answers[name] : hidden[name];
      return encodeURIComponent(v == null || typeof v === 'object' && !Array.isArray(v) ? '' : String(v));
    });
    if (/^https?:\/\//i.test(url)) location.assign(url);
  }

  /** The server says `answers.<id>: <message>`; visitors read it at the question, in their words. */
  function serverMessage(field, message) {
    if (/required|must be given/.test(message)) return say(field.q.type === 'consent' ? 'consent_required' : 'required');
    if (/email/.test(message)) return say('invalid_email');
    // The server's own words are English.
    return locale === 'en' ? message.charAt(0).toUpperCase() + message.slice(1) + '.' : say('invalid');
  }

  /**
   * Answers given in advance: `data-prefill-<question id>` on the tag or the
   * container and, on the service's hosted page, `?<question id>=value` (the
   * attribute wins). Attribute names are lower case, so an id is also found
   * in lower case.
   */
  function prefillValues() {
    var values = {};
    if (container && 'hosted' in container.dataset) new URLSearchParams(location.search).forEach(function (v, k) { values[k] = v; });
    [].forEach.call((container || script).attributes, function (a) {
      if (a.name.indexOf('data-prefill-') === 0) values[a.name.slice(13)] = a.value;
    });
    return values;
  }

  /**
   * Sets each question's controls as the visitor would, by the kind of
   * control (a new question type built of these needs nothing here); a value
   * a control cannot take is left out. The visitor can change every answer.
   */
  function prefill(fields, values) {
    fields.forEach(function (f) {
      var v = f.q.id in values ? values[f.q.id] : values[f.q.id.toLowerCase()];
      if (v === undefined) return;
      f.controls.forEach(function (c) {
        if (c.type === 'radio') { if (c.value !== v) return; c.checked = true; }
        else if (c.type === 'checkbox') c.checked = /^(1|true|yes|on)$/i.test(v);
        else if (c.tagName === 'SELECT') { if (![].some.call(c.options, function (o) { return o.value === v; })) return; c.value = v; }
        else c.value = v;
        c.dispatchEvent(new Event('change', { bubbles: true }));
      });
    });
  }

  /** 24 random bytes as 32 URL-safe characters: the visit's session, drawn once. */
  function sessionId() {
    var b = crypto.getRandomValues(new Uint8Array(24));
    return btoa(String.fromCharCode.apply(null, b)).replace(/\+/g, '-').replace(/\//g, '_');
  }

  /**
   * The questions of a widget or form, a page at a time (or one question at a
   * time), checked here for what is missing and by the server for the rest.
   * Which questions show, which page follows and which ending closes are the
   * evaluator's answers (the module the server walks the same path with).
   */
  function survey(body, object, done) {
    var fields = object.questions.map(question);
    var byId = {};
    fields.forEach(function (f) { byId[f.q.id] = f; });
    var pages = FeedbackLogic.pagesOf(object);
    var single = object.presentation === 'one_by_one';
    // The public view says whether the form keeps pages (its settings are the owner's); a preview keeps nothing.
    var keep = kind === 'form' && (object.keep_partial || (object.settings || {}).keep_partial) && !previewing;
    var session = keep ? sessionId() : null;
    var sent = Promise.resolve();
    // The pages visited, the current one last; the question shown when one at a time.
    var trail = [pages[0].id];
    var at = null;
    var honeypot = h('input', { type: 'text', name: 'website', tabindex: '-1', autocomplete: 'off' });
    var status = h('div', { class: 'error', role: 'status' });
    var live = h('div', { class: 'hp', 'aria-live': 'polite' });
    var heading = h('h3', { class: 'page', tabindex: '-1' });
    var bar = h('div', { class: 'bar', role: 'progressbar', 'aria-label': say('progress'), 'aria-valuemin': '0', 'aria-valuemax': '100' }, [h('span', {})]);
    var submit = h('button', { type: 'submit', class: 'primary', text: say('send') });
    var back = h('button', { type: 'button', text: say('back'), onclick: go });
    var paged = pages.length > 1 || single;
    var page = function (id) { return pages.filter(function (p) { return p.id === id; })[0]; };
    var here = function () { return trail[trail.length - 1]; };
    /** The answer a field holds; an unticked optional consent is no answer. */
    function value(f) {
      var v = f.value();
      return f.q.type === 'consent' && v === false && !f.q.required ? undefined : v;
    }
    /** The answers of the questions shown on the visited pages, and the questions the current page shows. */
    function state() {
      var raw = {};
      fields.forEach(function (f) { var v = value(f); if (v !== undefined) raw[f.q.id] = v; });
      var acc = {};
      var shown = [];
      trail.forEach(function (p) {
        shown = FeedbackLogic.shownOn(object, p, raw);
        shown.forEach(function (id) { if (id in raw) acc[id] = raw[id]; });
      });
      return { answers: acc, shown: shown };
    }
    /** Shows the current page (or question), the progress, Back, and Next or Send as the path goes on. */
    function draw() {
      var s = state();
      if (single && s.shown.indexOf(at) < 0) at = s.shown[0];
      var visible = single ? [at] : s.shown;
      fields.forEach(function (f) { f.el.hidden = visible.indexOf(f.q.id) < 0; });
      var index = pages.indexOf(page(here()));
      var step = single && s.shown.length ? s.shown.indexOf(at) / s.shown.length : 0;
      var title = page(here()).title;
      heading.textContent = title || say('page', { n: index + 1, total: pages.length });
      heading.hidden = pages.length < 2 && !title;
      bar.hidden = !paged;
      bar.firstChild.style.width = Math.round((index + step) / pages.length * 100) + '%';
      bar.setAttribute('aria-valuenow', Math.round((index + step) / pages.length * 100));
      back.hidden = trail.length < 2 && (!single || s.shown.indexOf(at) < 1);
      var last = !(single && s.shown.indexOf(at) < s.shown.length - 1) && !FeedbackLogic.next(object, here(), s.answers).page;
      submit.textContent = say(last ? 'send' : 'next');
      return s;
    }
    /** After a move: the new page's heading (or question) takes focus and a screen reader hears where it is. */
    function moved(toPage) {
      var s = draw();
      status.textContent = '';
      live.textContent = heading.textContent + (single && at ? ': ' + byId[at].q.title : '');
      var f = byId[at];
      if (single && f && !toPage) (f.focus ? f : f.controls[0] || heading).focus();
      else heading.focus();
      return s;
    }
    /** Back: the previous question of the page (one at a time), else the previous page, answers kept. */
    function go() {
      var s = state();
      var i = s.shown.indexOf(at);
      if (single && i > 0) at = s.shown[i - 1];
      else {
        trail.pop();
        var t = state().shown;
        at = t[t.length - 1];
      }
      moved(false);
    }
    function focusFirstInvalid() {
      for (var i = 0; i < fields.length; i++) {
        if (fields[i].error.textContent && !fields[i].el.hidden) return (fields[i].focus || fields[i].controls[0].focus).call(fields[i].focus ? fields[i] : fields[i].controls[0]);
      }
    }
    // An answer clears its question's error at once, and may show or hide questions after it.
    var change = function (event) {
      fields.forEach(function (f) { if (f.el.contains(event.target)) f.show(''); });
      draw();
    };
    /** One at a time, as Typeform: Enter goes on (Shift+Enter is a new line), a choice's letter or a scale's number picks it. */
    function keys(event) {
      var t = event.target;
      if (event.key === 'Enter' && !event.shiftKey && t.tagName !== 'BUTTON' && (single || t.tagName !== 'TEXTAREA')) {
        event.preventDefault();
        return form.requestSubmit(submit);
      }
      if (!single || event.ctrlKey || event.metaKey || event.altKey || /^(TEXTAREA|SELECT)$/.test(t.tagName) || (t.tagName === 'INPUT' && !/radio|checkbox/.test(t.type))) return;
      var pick = byId[at] && byId[at].controls.filter(function (c) { return c.dataset.key === event.key.toUpperCase(); })[0];
      if (!pick) return;
      event.preventDefault();
      pick.focus();
      pick.click();
    }
    /**
     * The server refused answers: each message at its question, and the
     * visitor taken back to the first page (or question) that holds one, its
     * answer focused. What names no question of the path is said under Send.
     */
    function refused(details, message) {
      var unplaced = [];
      var first = null;
      (details || []).forEach(function (d) {
        var field = fields.filter(function (f) { return 'answers.' + f.q.id === d.path; })[0];
        if (field) {
          field.show(serverMessage(field, d.message));
          first = first || field;
        } else unplaced.push(locale === 'en' ? d.path + ': ' + d.message : say('invalid'));
      });
      if (first && first.el.hidden) {
        var back = -1;
        var given = state().answers;
        for (var i = trail.length - 1; i >= 0 && back < 0; i--) if (FeedbackLogic.shownOn(object, trail[i], given).indexOf(first.q.id) >= 0) back = i;
        if (back >= 0) {
          trail = trail.slice(0, back + 1);
          at = first.q.id;
          draw();
        }
      }
      status.textContent = unplaced.length || !details ? unplaced.join('; ') || (locale === 'en' && message) || say('failed') : '';
      focusFirstInvalid();
    }
    var sending = false;
    var form = h('form', { novalidate: true, class: single ? 'obo' : null, oninput: change, onchange: change, onkeydown: keys, onsubmit: function (event) {
      event.preventDefault();
      if (sending) return;
      var s = state();
      var missing = false;
      status.textContent = '';
      (single ? [at] : s.shown).forEach(function (id) {
        var f = byId[id];
        if (!f) return;
        var v = f.value();
        var absent = f.q.required && (v === undefined || (v === false && f.q.type === 'consent') || (f.missing && f.missing()));
        f.show(absent ? serverMessage(f, 'required') : '');
        missing = missing || absent;
      });
      if (missing) return focusFirstInvalid();
      if (single && s.shown.indexOf(at) < s.shown.length - 1) {
        at = s.shown[s.shown.indexOf(at) + 1];
        return moved(false);
      }
      var then = FeedbackLogic.next(object, here(), s.answers);
      var hidden = previewing ? {} : hiddenValues(object);
      if (then.page) {
        if (keep) {
          var progress = { session: session, page: here(), answers: s.answers, hidden: hidden };
          sent = sent.then(function () { return send('/progress', progress); }).catch(function () { /* the submission still counts */ });
        }
        trail.push(then.page);
        at = null;
        return moved(true);
      }
      var ending = (object.endings || []).filter(function (e) { return e.id === then.ending; })[0];
      if (previewing) return done(ending);
      // Only the answers on the walked path are sent: the server refuses any other.
      var answers = {};
      FeedbackLogic.walk(object, s.answers).questions.forEach(function (id) { if (id in s.answers) answers[id] = s.answers[id]; });
      // Busy rather than disabled: a disabled button drops the focus, and the thank-you takes it from Send.
      sending = true;
      submit.setAttribute('aria-disabled', 'true');
      sent.then(function () {
        return send('/submit', {
          answers: answers,
          hidden: hidden,
          language: shownLanguage || undefined,
          session: session || undefined,
          _hp: honeypot.value,
          metadata: { pageUrl: location.href, pageTitle: document.title, fingerprint: fingerprint(), screenWidth: screen.width, screenHeight: screen.height, referrer: document.referrer || undefined },
        });
      }).then(function (r) {
        sending = false;
        submit.removeAttribute('aria-disabled');
        var end = ending || object;
        if (r.ok) return end.redirect_url ? redirectTo(end, answers, hidden) : done(ending);
        refused(r.body.details, r.body.message);
      }).catch(function () {
        sending = false;
        submit.removeAttribute('aria-disabled');
        status.textContent = say('offline');
      });
    } }, [bar, heading, live].concat(fields.map(function (f) { return f.el; }), [h('div', { class: 'hp', 'aria-hidden': 'true' }, [honeypot]), h('div', { class: 'nav' }, [back, submit]), status, note()]));
    if (!previewing) prefill(fields, prefillValues());
    draw();
    fill(body, [object.description ? h('p', { text: object.description }) : null, form]);
  }

  /** The ending's card (the object's own thank-you when none): its title, message and, in a widget, Close. */
  function thanks(body, object, onClose, ending) {
    var end = ending || { title: object.thank_you_title, message: object.thank_you_message };
    var title = h('h2', { text: end.title || say('thanks'), tabindex: '-1' });
    var hadFocus = body.contains(body.getRootNode().activeElement);
    fill(body, [title, end.message ? h('p', { text: end.message }) : null, onClose ? h('button', { type: 'button', text: say('close'), onclick: onClose }) : null, note()]);
    if (hadFocus) title.focus();
  }

  var votes = function (n) { return say('votes', { n: n }); };

  /** `back`: the results were asked for before voting, and the visitor may go back to the ballot. */
  function showResults(panel, tally, focus, back) {
    // The server counts by id; the texts are the ones the visitor read.
    var texts = {};
    (reading.options || []).forEach(function (o) { texts[o.id] = o.text; });
    tally = Object.assign({}, tally, { question: reading.question || tally.question, options: tally.options.map(function (o) { return Object.assign({}, o, { text: texts[o.id] || o.text }); }) });
    var title = h('h2', { text: tally.question, tabindex: '-1' });
    fill(panel, [title, h('p', { text: votes(tally.total_votes) })].concat(tally.options.map(function (o) {
      var bar = h('div', { class: 'bar', role: 'img', 'aria-label': percent(o.percentage) }, [h('span', {})]);
      bar.firstChild.style.width = o.percentage + '%';
      return h('div', { class: 'q' }, [h('div', { text: o.text + ' — ' + votes(o.votes) + ' (' + percent(o.percentage) + ')' }), bar]);
    }), [back ? h('button', { type: 'button', class: 'link', text: say('back'), onclick: back }) : null, note()]));
    if (focus) title.focus();
  }

  function results(panel, focus, back) {
    return request(api + '/results').then(function (r) {
      if (!r.ok) return warn('results unavailable: ' + (r.body.message || r.status));
      showResults(panel, r.body, focus, back);
    });
  }

  /** A preview counts only the vote cast in it (or none), as the voter would see the poll's results after it. */
  function previewResults(panel, poll, chosen, back) {
    showResults(panel, { question: poll.question, total_votes: chosen.length ? 1 : 0, options: poll.options.map(function (o, i) {
      var votes = chosen.indexOf(o.id || 'o' + i) < 0 ? 0 : 1;
      return { text: o.text, votes: votes, percentage: votes * 100 };
    }) }, true, back);
    return Promise.resolve();
  }

  function ballot(panel, poll) {
    var type = poll.allow_multiple ? 'checkbox' : 'radio';
    var inputs = poll.options.map(function (o, i) { return h('input', { type: type, name: 'option', value: o.id || 'o' + i, id: 'o' + i }); });
    var status = h('div', { class: 'error', role: 'status', id: 'ballot-error' });
    var honeypot = h('input', { type: 'text', tabindex: '-1', autocomplete: 'off' });
    var vote = h('button', { type: 'submit', class: 'primary', text: say('vote') });
    // Back from results asked for before voting: the ballot again, its first option focused.
    var again = function () {
      ballot(panel, poll);
      var first = panel.querySelector('input[name=option]');
      if (first) first.focus();
    };
    var form = h('form', { novalidate: true, onsubmit: function (event) {
      event.preventDefault();
      var chosen = inputs.filter(function (i) { return i.checked; }).map(function (i) { return i.value; });
      if (chosen.length === 0) { status.textContent = say('choose'); inputs[0].focus(); return; }
      if (previewing) return previewResults(panel, poll, chosen);
      vote.disabled = true;
      send('/vote', { option_ids: chosen, _hp: honeypot.value, metadata: { fingerprint: fingerprint() } }).then(function (r) {
        vote.disabled = false;
        if (r.ok || r.body.code === 'duplicate_submission') {
          remember('voted');
          return results(panel, true);
        }
        status.textContent = (locale === 'en' && r.body.message) || say('failed');
      }).catch(function () {
        vote.disabled = false;
        status.textContent = say('offline');
      });
    } }, [
      // The error ("choose an option") is read with the options.
      h('fieldset', { class: 'q', 'aria-describedby': 'ballot-error' }, [h('legend', { class: 'label', text: poll.question })].concat(poll.options.map(function (o, i) {
        return h('label', { class: 'check', for: 'o' + i }, [inputs[i], h('span', { text: o.text })]);
      }))),
      h('div', { class: 'hp', 'aria-hidden': 'true' }, [honeypot]),
      vote,
      status,
      h('button', { type: 'button', class: 'link', text: say('see_results'), onclick: function () { (previewing ? previewResults(panel, poll, [], again) : results(panel, true, again)).catch(function () { status.textContent = say('offline'); }); } }),
      note(),
    ]);
    fill(panel, [form]);
  }

  /** The event a widget's panel sends before it opens (see open). */
  var CORNER_OPENS = 'feedback-embed:corner-opens';

  /**
   * 100vw counts a classic scrollbar (Windows, Firefox), while the fixed box
   * is placed beside it: the panel is sized against the width the page shows,
   * kept up to date as the window or the scrollbar comes and goes. One
   * listener for every box (a preview draws new ones as the owner types).
   */
  var fitted = [];
  var watching = false;
  function fitVisibleWidth(box) {
    fitted.push(box);
    fitWidths();
    if (watching) return;
    watching = true;
    addEventListener('resize', fitWidths);
    if (window.ResizeObserver) new ResizeObserver(fitWidths).observe(document.documentElement);
  }
  function fitWidths() {
    // In quirks mode the body, not the root, answers the viewport's width.
    var root = document.compatMode === 'BackCompat' && document.body ? document.body : document.documentElement;
    // The layout viewport less its scrollbar, which fixed boxes are placed in (not the pinch-zoomed visual one).
    var width = (root.clientWidth || innerWidth) + 'px';
    // Boxes a preview drew over are let go; one not yet placed is kept.
    fitted = fitted.filter(function (b) { return b.isConnected || !b.parentNode; });
    fitted.forEach(function (b) { b.style.setProperty('--visible-width', width); });
  }

  /** The floating widget: a launcher, a panel, and the owner's trigger. */
  function widget(object) {
    var memory = recall();
    if (memory === 'answered') return;
    var config = object.trigger_config || {};
    var position = config.position || 'bottom-right';
    var corner = position.split('-');
    // A second widget in the same corner sits above the first.
    var stacked = document.querySelectorAll('[data-feedback-corner="' + position + '"]').length;
    var m = mount(object.theme || {}, { 'data-feedback-embed': kind, 'data-feedback-corner': position });
    var box = h('div', { class: 'box ' + corner.join(' '), lang: locale, dir: dir });
    box.style.setProperty('--off', stacked * 60 + 'px');
    fitVisibleWidth(box);
    var body = h('div', { class: 'body' });
    signalStarts(body);
    var close = h('button', { type: 'button', class: 'close', 'aria-label': say('close') }, [icon('close')]);
    var panel = m.paint(h('div', { class: 'panel', role: 'dialog', 'aria-labelledby': 'title', id: 'panel', hidden: true }, [
      h('div', { class: 'head' }, [h('h2', { id: 'title', text: object.title }), close]),
      body,
    ]));
    var launcher = m.paint(h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'panel', 'aria-label': config.text || object.title }, [
      icon(config.icon),
      config.showText && config.text ? h('span', { text: config.text, 'aria-hidden': 'true' }) : null,
    ]));
    var built = false;
    // Once the visitor has opened the panel themselves, no trigger opens it again.
    var fired = false;
    var answered = false;
    var timer = null;
    /**
     * Opened by a trigger, the panel leaves focus where the visitor had it; opened by them, it takes it.
     * Panels of one corner would open on top of each other: the visitor's opening closes another
     * one open there, and a trigger opens nothing while one is (each embed runs on its own, so they
     * tell each other through an event on the document).
     */
    function open(byVisitor) {
      if (!previewing && !document.dispatchEvent(new CustomEvent(CORNER_OPENS, { cancelable: true, detail: { corner: position, host: m.host, byVisitor: byVisitor } }))) return;
      fired = fired || byVisitor;
      signal('display');
      if (!built) {
        built = true;
        // The time to answer counts from here: the token carries when it was issued.
        token = null;
        if (!previewing) freshToken().catch(function () { /* fetched again on send */ });
        survey(body, object, function (ending) {
          thanks(body, object, function () { hide(true); }, ending);
          // A preview stays on its thank-you card until the owner closes it, and opens on its questions again.
          if (previewing) return;
          answered = true;
          remember('answered');
          timer = setTimeout(function () { hide(false); }, THANKS_CLOSE_MS);
        });
      }
      panel.hidden = false;
      launcher.setAttribute('aria-expanded', 'true');
      if (byVisitor) {
        var first = body.querySelector('input:not([tabindex]),textarea,select,button');
        if (first) first.focus();
      }
    }
    function hide(byVisitor) {
      clearTimeout(timer);
      var hadFocus = panel.contains(m.root.activeElement);
      panel.hidden = true;
      launcher.setAttribute('aria-expanded', 'false');
      if (!answered && byVisitor) remember('dismissed');
      if (previewing) built = false;
      if (answered) box.hidden = true;
      else if (hadFocus || byVisitor) launcher.focus();
    }
    document.addEventListener(CORNER_OPENS, function (event) {
      if (event.detail.corner !== position || event.detail.host === m.host || panel.hidden) return;
      if (event.detail.byVisitor) hide(false);
      else event.preventDefault();
    });
    close.addEventListener('click', function () { hide(true); });
    launcher.addEventListener('click', function () { if (panel.hidden) open(true); else hide(true); });
    panel.addEventListener('keydown', function (event) { if (event.key === 'Escape') hide(true); });
    box.append(panel, launcher);
    m.root.appendChild(box);
    if (previewing) {
      open(false);
      return { host: m.host, thanks: function () { thanks(body, object, function () { hide(true); }); } };
    }
    if (memory === 'dismissed') return;
    function trigger() { if (!fired && panel.hidden) { fired = true; open(false); } }
    var delay = (config.timeDelay || 0) * 1000;
    var touch = matchMedia('(hover: none)').matches;
    if (config.triggerMode === 'time_delay' || (config.triggerMode === 'exit_intent' && touch)) setTimeout(trigger, delay);
    if (config.triggerMode === 'scroll') {
      var onScroll = function () {
        var max = document.documentElement.scrollHeight - innerHeight;
        if (max <= 0 || (scrollY / max) * 100 >= config.scrollPercentage) {
          removeEventListener('scroll', onScroll);
          removeEventListener('resize', onScroll);
          trigger();
        }
      };
      addEventListener('scroll', onScroll, { passive: true });
      addEventListener('resize', onScroll);
      // A page too short to scroll never sends a scroll event: it counts as read at once.
      onScroll();
    }
    if (config.triggerMode === 'exit_intent' && !touch) {
      document.addEventListener('mouseout', function onOut(event) {
        if (!event.relatedTarget && event.clientY <= 0) { document.removeEventListener('mouseout', onOut); trigger(); }
      });
    }
  }

  function inline(object) {
    var m = mount(object.theme || {}, { 'data-feedback-embed': kind });
    var body = h('div', { class: 'body' });
    var panel = m.paint(h('section', { class: 'panel inline', lang: locale, dir: dir, 'aria-label': object.title || object.question || kind }, [body]));
    m.root.appendChild(panel);
    var shown = { host: m.host, thanks: function (ending) { thanks(body, object, null, ending); } };
    if (!object.closed && !(kind === 'poll' && recall() === 'voted')) signalWhenSeen(m.host);
    signalStarts(body);
    if (object.closed) fill(body, [h('p', { text: say('closed_' + kind) }), note()]);
    else if (kind === 'poll') {
      if (recall() === 'voted') results(body, false);
      else ballot(body, object);
    } else {
      // On the service's own page the form is the page: its title is the page's heading.
      fill(body, [h(container && 'hosted' in container.dataset ? 'h1' : 'h2', { text: object.title })]);
      var content = h('div', {});
      body.appendChild(content);
      survey(content, object, shown.thanks);
    }
    return shown;
  }

  /** Shown in every screen of a preview, so nobody takes it for the live embed. */
  function note() {
    return previewing ? h('p', { class: 'note', role: 'note', text: say('preview') }) : null;
  }

  /**
   * Draws a definition (an object as its owner's GET shows it, saved or not)
   * into `target` with the code a site runs, replacing the previous preview;
   * `options.screen` 'thanks' shows the thank-you card, `options.mode` stands
   * for data-mode, `options.lang` for the visitor's language. Nothing is
   * fetched (but the language's pack), stored or sent.
   */
  var previews = 0;
  function preview(target, what, object, options) {
    options = options || {};
    previewTarget = target || document.body;
    // Every earlier drawing goes, also one a definition broke halfway through.
    [].forEach.call(previewTarget.querySelectorAll('[data-feedback-embed]'), function (old) { old.remove(); });
    painted = [];
    kind = what;
    pageMode = options.mode || data.mode;
    // `options.lang` is the language to show, the object's own by default; its pack comes once, then the preview draws again.
    var lang = options.lang || object.language || 'en';
    var code = packOf(lang) || 'en';
    var drawing = ++previews;
    if (!packs.loaded[code]) loadPack(code).then(function () { if (drawing === previews) preview(target, what, object, options); });
    object = use(object, lang, packs.loaded[code] || EMBED_EN);
    var shown = kind === 'widget' ? widget(object) : inline(object);
    if (options.screen === 'thanks' && kind !== 'poll') shown.thanks();
    return shown.host;
  }

  /** The parent page (the same origin only) posts {type: 'feedback-preview', kind, object, options}; the page answers that it is ready to draw. */
  function listen() {
    window.FeedbackEmbed = { preview: preview };
    addEventListener('message', function (event) {
      var m = event.data;
      if (event.origin !== location.origin || event.source !== parent || !m || m.type !== 'feedback-preview') return;
      try {
        preview(document.querySelector('[data-preview-target]'), m.kind, m.object, m.options);
      } catch (e) {
        warn('cannot draw this definition yet (' + e.message + ')');
      }
    });
    if (parent !== window) parent.postMessage({ type: 'feedback-preview-ready' }, location.origin);
  }

  /** The object, then a token (which checks this site is allowed), then the embed; a reason in the console otherwise. */
  function start() {
    request(api).then(function (r) {
      if (!r.ok) return warn(r.body.message || 'the server answered ' + r.status);
      if (r.body.closed && kind === 'widget') return warn('this widget is closed');
      return localize(r.body).then(function (object) {
        if (object.closed) return inline(object);
        return fetchToken().then(function () {
          if (kind === 'widget') widget(object);
          else inline(object);
        }, function (t) {
          warn(t && t.body ? t.body.message || 'no embed token: ' + t.status : 'could not reach ' + base);
        });
      });
    }).catch(function (error) {
      warn('could not reach ' + base + ' (' + (error && error.message) + ')');
    });
  }

  /** Runs once the page's HTML is parsed: an async script may run before the containers after it exist. */
  function whenParsed(then) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', then);
    else then();
  }

  /**
   * Every `<div data-form|data-poll|data-widget="…">` of the page not drawn
   * yet gets an embed of its own (`draw`, this whole script, run for it), so
   * one script tag serves every container, and two tags never draw one twice.
   */
  function drawContainers(script, draw) {
    [].forEach.call(document.querySelectorAll('[data-form],[data-poll],[data-widget]'), function (el) {
      if (el.tagName === 'SCRIPT' || el.feedbackEmbedDrawn) return;
      el.feedbackEmbedDrawn = true;
      draw(script, el);
    });
  }

  var begin = previewing ? listen : start;
  if (document.body) begin();
  else document.addEventListener('DOMContentLoaded', begin);
})(document.currentScript);
