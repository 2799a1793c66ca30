import ArgumentParser
import NIOCore
import NIOPosix
import Foundation
import UploadCore
import UploadClient
import UploadCommands
import UploadJournal
import UploadReports

@main
struct Uploadmon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uploadmon",
        abstract: "Send image files to an HTTP endpoint as multipart/form-data and watch them go.",
        discussion: CommandHelp.uploadmon,
        version: UploadmonVersion.current,
        subcommands: [
            MonitorCommand.self, SendCommand.self, ServeCommand.self, DemoCommand.self, PresignCommand.self, ConvertCommand.self, StatusCommand.self,
            RetryCommand.self, CancelCommand.self, WatchCommand.self, JobsCommand.self, AgentCommand.self, CompletionsCommand.self, DestinationsCommand.self,
        ],
        defaultSubcommand: MonitorCommand.self
    )

    /// As ArgumentParser's own `main`, but `send` runs its tasks on the event loops that do its
    /// I/O (NIO's group as Swift Concurrency's global executor): a thousand small uploads then
    /// hop between thread pools a few thousand times less (measured: 5-10 % of send's CPU).
    /// Commands that block in tasks (the agent's journal, the monitor) keep the default pool.
    static func main() async {
        do {
            guard
                let arguments = try DestinationArguments.commandLine(
                    CommandLineBytes.arguments(), environment: ProcessInfo.processInfo.environment,
                    terminal: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1)
            else { return }
            if let send = quickSend(arguments) {
                prepareToSend()
                throw ExitCode(try await send.run())
            }
            var command = try parse(arguments)
            if command is SendCommand {
                prepareToSend()
            } else if command is MonitorCommand || command is AgentCommand.Run {
                shareResumeSupport()
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch var error {
            // A command's own exit status says nothing more (ArgumentParser's message for it is
            // empty, and building it describes the whole command by reflection).
            if let exit = error as? ExitCode { Foundation.exit(exit.rawValue) }
            if let failure = error as? CommandFailure {
                switch failure.kind {
                case .usage: error = ValidationError(failure.message)
                case .failed: break
                case .refused:
                    Console.complain("Error: " + failure.message)
                    Foundation.exit(64)
                case .said(let status): Foundation.exit(status)
                }
            }
            // As `exit(withError:)`, but the message (which can quote a path, a URL or a server's
            // words) goes out by the terminal escaping rule.
            let message = fullMessage(for: error)
            let code = exitCode(for: error)
            if !message.isEmpty {
                if code == .success { Console.say(message) } else { Console.complain(message) }
            }
            Foundation.exit(code.rawValue)
        }
    }

    /// What `send` needs before it runs, however its command line was read: the origins'
    /// remembered answers, and its tasks on the event loops.
    static func prepareToSend() {
        shareResumeSupport()
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Which origins resume uploads, shared by every process of this user.
    static func shareResumeSupport() {
        let paths = StatePaths.resolve()
        if (try? paths.prepare()) != nil {
            ResumeSupportStore.shared.withLockedValue { $0 = ResumeSupportStore(path: paths.stateDirectory + "/resume-support.json") }
        }
    }

    /// `send`'s command line when `SendInvocation.quick` reads it and it passes every check;
    /// nil sends it through ArgumentParser (`parse`), which says any mistake with the usage.
    /// A debug build parses it that way too and stops if the two differ.
    static func quickSend(_ arguments: [String]) -> SendInvocation? {
        guard arguments.first == "send", let quick = SendInvocation.quick(Array(arguments.dropFirst())),
            quick.options.commandLineRefusal() == nil, quick.arguments.refusal() == nil
        else { return nil }
        #if DEBUG
            let declared = (try? SendCommand.parseAsRoot(Array(arguments.dropFirst())) as? SendCommand)?.invocation
            precondition(declared == quick, "send's command line read two ways differs: \(String(describing: declared)) vs \(quick)")
        #endif
        return quick
    }

    /// The command the arguments name. `send` is parsed as a command of its own first:
    /// building the whole tree of subcommands costs ArgumentParser a few milliseconds of
    /// protocol-conformance lookups at every start, a third of a small upload's whole process.
    /// Anything that does not parse that way (help, a mistake) goes through the root, which
    /// says it as before.
    /// With many files (a shell glob), their operands are set aside first (`ManyOperands`).
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        if arguments.first == "send", !arguments.contains(where: { ["-h", "--help", "help", "--version", "--experimental-dump-help"].contains($0) }) {
            if arguments.count > ManyOperands.threshold, let send = try parseMany(Array(arguments.dropFirst())) { return send }
            if let send = try? SendCommand.parseAsRoot(Array(arguments.dropFirst())) { return send }
        }
        return try parseAsRoot(arguments)
    }

    /// `send`'s arguments with the operands after the first set aside, parsed, and the operands
    /// added back in order. A mistake in the options is said as the usual parse of the options
    /// alone says it (the operands play no part in it, and would take it seconds); nil when the
    /// arguments cannot be split with certainty.
    static func parseMany(_ arguments: [String]) throws -> SendCommand? {
        guard let (parsed, operands) = ManyOperands.split(arguments, valueOptions: ManyOperands.valueOptions(fromHelpDump: SendCommand._dumpHelp())) else {
            return nil
        }
        guard var send = (try? SendCommand.parseAsRoot(parsed)) as? SendCommand else {
            _ = try parseAsRoot(["send"] + parsed)
            return nil
        }
        send.files += operands
        try send.validate()
        return send
    }
}
