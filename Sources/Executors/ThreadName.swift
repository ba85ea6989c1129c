import CLinuxShims
import Foundation

enum ThreadName {
    /// Names the calling thread `name` for the system (`ps -L`, `top`, `/proc/…/comm`), cut to its first 15 bytes at
    /// a character's edge (Linux keeps no more), and for Foundation.
    ///
    /// Set with `prctl(PR_SET_NAME)` on the thread itself: Foundation's `Thread.name` passes a name on to the system
    /// only when the `Thread` already knows its own pthread, which a thread just started may not yet (the creator
    /// records it after `pthread_create` returns), and the thread keeps its creator's name then.
    static func nameCurrentThread(_ name: String) {
        var cut = ""
        for character in name {
            guard cut.utf8.count + String(character).utf8.count <= 15 else { break }
            cut.append(character)
        }
        _ = CLinuxShims_setThreadName(cut)
        Thread.current.name = name
    }
}
