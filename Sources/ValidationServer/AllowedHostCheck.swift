import FareCore
import Hummingbird

/// Refuses, with 421 Misdirected Request and the API's error body, every request whose `Host` is not one of the
/// server's allowed hosts (`farecheck-server serve --allowed-host`), as the daemon's page does.
///
/// A name the server was never meant to answer to (a DNS-rebinding page's, a stray virtual host's) then reaches
/// nothing: no route, no database, no operator report.
struct AllowedHostCheck<Context: RequestContext>: RouterMiddleware {
    let hosts: AllowedHosts

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard hosts.allows(request.head.authority) else {
            return APIFailure(
                .misdirectedRequest, "misdirected-request",
                "This server does not answer to that host name; ask its administrator for the right address."
            ).response
        }
        return try await next(request, context)
    }
}
