import TerminalCanvas
import UploadCore

/// `D`: where the next uploads go, chosen among the saved destinations. Uploads already queued
/// go on to where they were going.
extension MonitorReducer {
    static func handleDestinationKey(_ key: Key, selected: Int, _ state: inout MonitorState) -> [MonitorEffect] {
        let count = state.destinations.count
        switch key {
        case .down, .character("j"):
            state.modal = .destinations(selected: min(count - 1, selected + 1))
        case .up, .character("k"):
            state.modal = .destinations(selected: max(0, selected - 1))
        case .enter, .character(" "):
            state.modal = nil
            guard state.destinations.indices.contains(selected) else { return [] }
            return choose(state.destinations[selected], &state)
        default:
            state.modal = nil
        }
        return []
    }

    static func choose(_ destination: DestinationEntry, _ state: inout MonitorState) -> [MonitorEffect] {
        if let refusal = destination.refusal {
            state.message = StatusMessage("\(destination.name) cannot be used: \(refusal)", isError: true)
            return []
        }
        guard destination.name != state.destinationName else { return [] }
        state.destinationName = destination.name
        state.endpoint = destination.shown
        // The photos go as the new destination writes them; an `F` choice was for the old one.
        state.conversion = destination.conversion
        state.conversionChoice = nil
        let written = destination.conversion.flatMap { $0.changesAnything ? "; photos go \($0.words)" : nil } ?? ""
        state.message = StatusMessage("Uploads queued from now on go to \(destination.name) (\(destination.shown))\(written)")
        return [.switchDestination(name: destination.name)]
    }
}
