import Messaging

/// The smallest Herald observer: an object with a receiver.
final class HeraldObserver: Observer {
    let receiver = Receiver()
}
