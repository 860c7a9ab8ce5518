// Labels of the server's own values (engine names, metric names, length kinds): the page's view renders them into
// a JSON data block (id "labels"), so that the browser names a value exactly as the server's tables do.
var node = document.getElementById("labels");

export const LABELS = Object.freeze(node ? JSON.parse(node.textContent) : {});

// {key: label} as {prefix + key: label}, to sit beside a page's other words
export function prefixed(prefix, labels) {
  var out = {};
  Object.keys(labels || {}).forEach(function (key) { out[prefix + key] = labels[key]; });
  return out;
}
