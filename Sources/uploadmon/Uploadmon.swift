import ArgumentParser
import UploadCore

@main
struct Uploadmon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uploadmon",
        abstract: "Send image files to an HTTP endpoint as multipart/form-data and watch them go.",
        version: UploadmonVersion.current,
        subcommands: [MonitorCommand.self, SendCommand.self, ServeCommand.self, DemoCommand.self, StatusCommand.self, WatchCommand.self, JobsCommand.self, AgentCommand.self],
        defaultSubcommand: MonitorCommand.self
    )
}
