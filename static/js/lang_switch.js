// The language switch in the top bar: choosing a language submits the form (Django's set_language
// remembers it in a cookie); without scripts the form's own button does the same.
const form = document.getElementById("lang-switch");
if (form) {
  const select = form.querySelector("select");
  const button = form.querySelector("button");
  if (button) button.hidden = true;
  select.addEventListener("change", () => form.submit());
}
