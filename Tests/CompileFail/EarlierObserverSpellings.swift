// Must compile, with warnings: an app that calls ConnectionObserver's earlier spellings
// (Bluejay's README's, 0.1's) by hand is told each is deprecated, and which one Bluejay
// calls instead.
import Bluejay

@MainActor
func forward(_ observer: any ConnectionObserver, _ peripheral: Peripheral) {
    observer.connected(to: peripheral)
    observer.disconnected(from: peripheral)
    observer.connected(peripheral)
    observer.disconected()
}
