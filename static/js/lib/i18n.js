// The browser's translations: Django's JavaScript catalog (/jsi18n/, a script every page loads
// before its modules) in the page's language; English where there is none (node --test, a missing
// string). Names as xgettext knows them, so `manage.py makemessages -d djangojs` finds every string.

const catalog = () => globalThis.django;

export function gettext(text) {
  const django = catalog();
  return django && django.gettext ? django.gettext(text) : text;
}

export function ngettext(one, many, count) {
  const django = catalog();
  if (django && django.ngettext) return django.ngettext(one, many, count);
  return count === 1 ? one : many;
}

// "%(name)s" placeholders filled from `values` (as Django's interpolate with named=true).
export function interpolate(text, values) {
  return text.replace(/%\((\w+)\)s/g, (whole, key) => (key in values ? String(values[key]) : whole));
}

// The page's language (Django's code: "en", "zh-hans").
export function pageLanguage() {
  return (globalThis.document && document.documentElement.lang) || "en";
}

// A lesson text (`say`, `after`, `question`, `title`, `summary`) in `language` where the server
// sent a translation (`i18n`), else as written.
export function localized(entry, key, language = pageLanguage()) {
  const texts = entry && entry.i18n && entry.i18n[language];
  return texts && texts[key] !== undefined ? texts[key] : entry[key];
}
