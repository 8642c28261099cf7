// sounding view: submits the filters when one changes, and on a page that changes (a run in
// progress, the runs list) polls its progress and swaps in the page's new content. It reads
// nothing from a run but the server-rendered, escaped page.
(function () {
  "use strict";

  function bindFilters(root) {
    root.querySelectorAll("form.filters select").forEach(function (select) {
      select.addEventListener("change", function () {
        select.form.requestSubmit();
      });
    });
  }

  function swapIn(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var main = fresh.getElementById("main");
    if (main) {
      document.getElementById("main").replaceWith(main);
      bindFilters(main);
    }
    return fresh.body.dataset.live ? fresh.body.dataset.stamp : null;
  }

  bindFilters(document);
  var progressUrl = document.body.dataset.live;
  if (!progressUrl) {
    return;
  }
  var stamp = document.body.dataset.stamp;
  var busy = false;
  var timer = null;

  function poll() {
    if (busy) {
      return;
    }
    busy = true;
    fetch(progressUrl, { cache: "no-store" })
      .then(function (answer) {
        return answer.ok ? answer.json() : null;
      })
      .then(function (state) {
        if (!state || state.stamp === stamp) {
          return null;
        }
        return fetch(location.href, { cache: "no-store" })
          .then(function (page) {
            return page.text();
          })
          .then(function (html) {
            var next = swapIn(html);
            stamp = state.stamp;
            document.body.dataset.stamp = stamp;
            if (next === null) {
              clearInterval(timer);
              delete document.body.dataset.live;
            }
          });
      })
      .catch(function () {
        // the viewer stopped: the page stays as it is
      })
      .then(function () {
        busy = false;
      });
  }

  timer = setInterval(poll, 1000);
})();
