import Hummingbird
import NIOCore

/// The receiver's request context: which connection a request came on, so that the endpoint
/// can take what that connection's gate learnt of the request (`ConnectionRegistry.nextRequest`).
struct ReceiverContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's number in the registry.
    let connection: UInt

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ConnectionRegistry.id(of: source.channel)
    }
}
