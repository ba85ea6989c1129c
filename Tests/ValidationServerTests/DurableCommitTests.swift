import Foundation
import Testing

@testable import ValidationServer

/// An inspection the server acknowledged must survive a power cut at the server: its writer syncs every commit.
@Suite("The server's SQLite writer")
struct DurableCommitTests {
    @Test("syncs every commit to disk (synchronous = FULL), also right after it opened the file")
    func syncsEveryCommit() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-durable-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let executor = try SQLiteExecutor(path: directory.path + "/server.sqlite", create: true)
        let rows = try await executor.write { session in try await session.query("PRAGMA synchronous", []) }
        // 2: FULL. GRDB turns a pool's writer to NORMAL (1) when it sets up the write-ahead log.
        #expect(rows.first.flatMap { $0.columns["synchronous"] } == .integer(2))
    }
}
