"""Once a DRF response is rendered, its view lets go of it.

A request is freed only by Python's cyclic collector: it and its messages storage, its htmx details and DRF's
request refer to one another. The DRF view hangs off that cycle (DRF's request names it in its parser context)
and keeps its response (`view.response`), whose renderer context names the view again: so a response's data, a
catalog page of 100 entries with their inputs (some 600 objects), waited for the collector too. Under load its
passes over the pages in flight stalled the worker's threads: the catalog's p99 under 16 connections. After
rendering neither reference is needed; without them the data is freed by reference counting once sent."""


class ReleaseRenderedResponseMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        context = getattr(response, "renderer_context", None)
        if context and getattr(response, "is_rendered", False):
            view = context.get("view")
            if getattr(view, "response", None) is response:
                view.response = None
            response.renderer_context = None
        return response
