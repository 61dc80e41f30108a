// The presenter's join card: the class's code in the top bar; a click or J opens the code, the join
// address and the QR code of the follower link, large enough to read and scan from the back row.

export function wireJoinCard(card, dialog) {
  if (!card || !dialog) return;
  const toggle = () => (dialog.open ? dialog.close() : dialog.showModal());
  card.addEventListener("click", toggle);
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "j" && event.key !== "J") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    event.preventDefault();
    toggle();
  });
}
