// Stand-ins for the UIKit objects Bluejay's README snippets touch (the one kind of stub the
// seeds' compile test allows besides `@MainActor` on the enclosing type and a transport).
import Foundation

@MainActor class UIViewController {
    var navigationController: UINavigationController?
    func performSegue(withIdentifier identifier: String, sender: Any?) {}
}

@MainActor class UINavigationController: UIViewController {
    @discardableResult func popViewController(animated: Bool) -> UIViewController? { nil }
}

@MainActor class UILabel {
    var text: String?
}

@MainActor class UITableView {
    func reloadData() {}
}

@MainActor class UITableViewCell {
    enum AccessoryType { case none, checkmark }
    var accessoryType = AccessoryType.none
    var detailTextLabel: UILabel?
}

extension IndexPath {
    /// UIKit's row of a table's index path.
    var row: Int { self[1] }
}
