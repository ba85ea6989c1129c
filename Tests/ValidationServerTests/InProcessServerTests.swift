import Foundation
import NIOHTTP1
import Testing
import ValidationAPI
import ValidationServer

@Suite("The server inside another program", .timeLimit(.minutes(5)))
struct InProcessServerTests {
    @Test(
        "APIServer runs in a task over a store, answers on its port, and stops when the task is cancelled",
        arguments: Backend.available)
    func runsInProcess(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let location = try bench.location()
        let token = try await location.withStore(create: true) { store in try await store.registerDevice(id: "v1") }

        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let server = Task {
            try await location.withStore(create: true) { store in
                try await APIServer(store: store, configuration: ServerConfiguration(port: 0, logLevel: .error))
                    .run(stopsOnSignals: false) { _, port in portSink.yield(port) }
            }
        }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let answer = try await send(.GET, "http://127.0.0.1:\(port)/v1/keys", token: token)
        #expect(answer.status == 404)
        #expect(answer.errorBody?.error == "no-bundle")
        server.cancel()
        _ = await server.result
    }
}
