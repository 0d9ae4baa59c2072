// walletgate's approval page, passkey mode: asks the browser for the passkey
// and hands its answer to the page's own form. Talks only to this origin.
"use strict";
(function () {
  function say(msg) {
    const p = document.getElementById("passkey-problem");
    p.textContent = msg;
    p.hidden = false;
  }
  async function options(url) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin" });
    const body = await r.text();
    if (!r.ok) throw new Error(body);
    return JSON.parse(body).publicKey;
  }
  function wire(id, field, ask) {
    const button = document.getElementById(id);
    if (!button) return;
    button.addEventListener("click", async function (ev) {
      ev.preventDefault();
      const form = button.form;
      button.disabled = true;
      try {
        const cred = await ask(await options(form.dataset.begin));
        form.elements[field].value = JSON.stringify(cred.toJSON());
        form.submit();
      } catch (e) {
        button.disabled = false;
        say("Nothing was approved or enrolled: " + (e && e.message ? e.message : e));
      }
    });
  }
  wire("approve", "assertion", function (o) {
    return navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(o) });
  });
  wire("enrol", "credential", function (o) {
    return navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(o) });
  });
})();
