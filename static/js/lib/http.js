// The JSON API of a cluster (/api/clusters/<slug>/…): one request, its JSON answer, and on a refusal
// the server's Status message (or the HTTP status when the body is not JSON).

export async function exchangeJson(url, method, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
  return { ok: response.ok, status: response.status, data };
}

// The answer, or an Error carrying the refusal's message.
export async function callJson(url, method, body) {
  const { ok, status, data } = await exchangeJson(url, method, body);
  if (!ok) throw new Error(data.message || `HTTP ${status}`);
  return data;
}
