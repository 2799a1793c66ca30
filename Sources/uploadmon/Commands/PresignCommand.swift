import ArgumentParser
import Foundation
import UploadCore
import UploadCommands

/// `uploadmon presign s3://bucket/key`: a URL anyone can PUT that object to, for a while.
struct PresignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presign",
        abstract: "Print a presigned PUT URL for an S3 object (SigV4 in the query), valid for --expires.",
        discussion: CommandHelp.presign
    )

    @Argument(help: ArgumentHelp("The object: s3://bucket/key.", valueName: "s3-url"))
    var object: String

    @Option(name: .long, help: ArgumentHelp("How long the URL works: 90s, 15m, 1h, 7d at most.", valueName: "duration"))
    var expires = "1h"

    func validate() throws {
        do throws(UploadInputError) { _ = try Presign.object(object) } catch { throw ValidationError(error.description) }
        do throws(RangeError) { _ = try Presign.lifetime(expires) } catch { throw ValidationError(error.message) }
    }

    func run() throws {
        let lifetime = try Presign.lifetime(expires)  // checked in validate()
        do throws(UploadInputError) {
            print(try Presign.url(try Presign.object(object), expires: lifetime, environment: ProcessInfo.processInfo.environment, now: Date()))
        } catch {
            FileHandle.standardError.write(Data("uploadmon presign: \(error.description)\n".utf8))
            throw ExitCode(78)
        }
    }
}
