package activation

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// MaxVerdictBytes is the format's limit on a whole verdict, which every
// reader refuses past (docs/verdict-format.md).
const MaxVerdictBytes = 16384

// MaxMachineID is the longest machine id, in characters (CheckMachineID).
const MaxMachineID = 128

// longestState is the longest state a verdict may say.
const longestState = licentia.StateExpired

// WorstVerdictBytes is the length of the longest verdict the service could
// sign for a licence granting gs: every other field at the longest the
// service lets it be (machine id, product id, both ids, both expiries,
// major, limit), every grant in force. The fields are ASCII that JSON
// writes as it is, so the length does not depend on their content.
func WorstVerdictBytes(gs []licentia.FeatureGrant) int {
	id := "00000000-0000-0000-0000-000000000000"
	at := licentia.FormatTime(time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC))
	v := sdk.Verdict{
		Format: sdk.VerdictFormat, LicenceID: id, ProductID: strings.Repeat("p", licentia.MaxProductID),
		MachineID: strings.Repeat("m", MaxMachineID), ActivationID: &id, State: string(longestState),
		ExpiresAt: &at, TrialEndsAt: &at, Major: licentia.MaxMajor, LimitKind: string(licentia.LimitMachines),
		LimitCount: licentia.MaxLimitCount, IssuedAt: at, ValidUntil: at, KeyFingerprint: strings.Repeat("f", 16),
		Features: verdictFeatures(gs),
	}
	payload, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, numbers and pointers to strings always encode
	}
	b64 := base64.RawURLEncoding
	return len("v1.") + b64.EncodedLen(len(payload)) + len(".") + b64.EncodedLen(64)
}

// CheckVerdictFits adds an issue at path when gs could make a verdict
// longer than the format's limit, which no reader would accept: the
// grants are refused when given, never a verdict cut or left unsigned
// later.
func CheckVerdictFits(is *licentia.Issues, path string, gs []licentia.FeatureGrant) {
	if n := WorstVerdictBytes(gs); n > MaxVerdictBytes {
		is.Add(path, "would make verdicts of up to %d bytes, over the format's limit of %d: grant fewer features, with shorter codes or without expiries",
			n, MaxVerdictBytes)
	}
}
