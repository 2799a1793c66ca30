import ArgumentParser
import Foundation
import UploadCore
import UploadCommands

/// `uploadmon presign s3://bucket/key`: a URL anyone can PUT that object to, for a while.
struct PresignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presign",
        abstract: "Print a presigned PUT URL for an S3 object (SigV4 in the query), valid for --expires.",
        discussion: """
        The credentials, region and endpoint are read as for send --to s3:// (AWS_ACCESS_KEY_ID and \
        AWS_SECRET_ACCESS_KEY, else AWS_PROFILE in ~/.aws; AWS_REGION; AWS_ENDPOINT_URL). Whoever \
        holds the URL can upload that one object until it expires, without the credentials: hand \
        it to a demo's client, or use it here with send FILE --put --to URL.

        Examples:
          uploadmon presign s3://photos/2026/cat.jpg --expires 1h
          curl -T cat.jpg "$(uploadmon presign s3://photos/cat.jpg)"
        """
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
        let lifetime = try Presign.lifetime(expires)   // checked in validate()
        do throws(UploadInputError) {
            print(try Presign.url(try Presign.object(object), expires: lifetime, environment: ProcessInfo.processInfo.environment, now: Date()))
        } catch {
            FileHandle.standardError.write(Data("uploadmon presign: \(error.description)\n".utf8))
            throw ExitCode(78)
        }
    }
}
