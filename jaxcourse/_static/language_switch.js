// The language switch (jaxcourse/i18n_site.py) keeps the reader's place: both editions give a
// section the same id (Sphinx keeps the English ids in the translated pages), so the switch's
// link gets the id of the section being read when it is followed. "Being read": the last
// section whose top has scrolled above a quarter of the window, the page's own title aside
// (an unscrolled page opens the other one at its top); else the address's own #anchor.
(function () {
  "use strict";
  function currentSection() {
    const sections = Array.from(document.querySelectorAll("article section[id]")).slice(1);
    let current = null;
    if (window.scrollY > 0) {
      for (const section of sections) {
        if (section.getBoundingClientRect().top <= window.innerHeight / 4) current = section.id;
      }
    }
    return current || decodeURIComponent(window.location.hash.slice(1)) || null;
  }
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a.language-switch");
    if (!link) return;
    const id = currentSection();
    const base = link.getAttribute("href").split("#")[0];
    link.setAttribute("href", id ? `${base}#${encodeURIComponent(id)}` : base);
  });
})();
