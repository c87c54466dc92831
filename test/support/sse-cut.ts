/**
 * A dropped connection in the middle of an SSE answer, for resumption tests: the response's body
 * errors right after the chunk that carried its first progress event, as a network cut would, so
 * an SDK client resumes the stream with GET + `Last-Event-ID`.
 */
export function cutAfterFirstProgress(res: Response): Response {
  if (res.body === null) return res;
  const reader = res.body.getReader();
  let text = '';
  const cutting = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      text += new TextDecoder().decode(value);
      controller.enqueue(value);
      if (text.includes('notifications/progress')) {
        controller.error(new Error('connection dropped by the test'));
        await reader.cancel();
      }
    },
  });
  return new Response(cutting, { status: res.status, headers: res.headers });
}
