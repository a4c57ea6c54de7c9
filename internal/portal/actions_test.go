package portal_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

// TestList: the page lists every licence of the address in the
// organization, across products and sources, newest first, with its key
// and machines, and never another address's, another organization's, an
// anonymised one or one whose key was reissued (its replacement instead).
func TestList(t *testing.T) {
	e := newEnv(t, envOptions{})
	photo := e.issue(t, e.org.ID, "photo", "ada@example.com")
	e.clock.Advance(time.Minute)
	sync := e.issue(t, e.org.ID, "sync", "ADA@example.com")
	e.activate(t, *sync.Key, "machine-0001-abcdefghijkl")
	e.clock.Advance(time.Minute)
	gone := e.issue(t, e.org.ID, "photo", "ada@example.com")
	if _, err := e.admin.AnonymiseLicence(t.Context(), licentia.OperatorActor, e.org.ID, gone.Licence.ID, adminAnonymise()); err != nil {
		t.Fatal(err)
	}
	old := e.issue(t, e.org.ID, "photo", "ada@example.com")
	fresh, err := e.admin.ReissueLicence(t.Context(), licentia.OperatorActor, e.org.ID, old.Licence.ID, admin.Reissue{Reason: ptr("leaked")})
	if err != nil {
		t.Fatal(err)
	}
	other := e.issue(t, e.org.ID, "photo", "bob@example.com")
	beta := e.organization(t, "Beta", "beta")
	e.product(t, beta.ID, "betaapp")
	theirs := e.issue(t, beta.ID, "betaapp", "ada@example.com")

	page := e.signIn(t, "acme", "ada@example.com").get(t, "/portal/acme/")
	wantStatus(t, "licences", page, http.StatusOK)
	order := []string{*fresh.Key, *sync.Key, *photo.Key}
	last := -1
	for _, key := range order {
		i := strings.Index(page.body, key)
		if i < 0 || i < last {
			t.Errorf("key %s missing or out of order (newest first):\n%s", key, page.body)
		}
		last = i
	}
	for _, key := range []string{*old.Key, *other.Key, *theirs.Key} {
		if strings.Contains(page.body, key) {
			t.Errorf("the page shows a key it must not: %s", key)
		}
	}
	if strings.Contains(page.body, gone.Licence.ID) {
		t.Errorf("the page shows the anonymised licence")
	}
	for _, want := range []string{"Photo Studio", "Sync Pro", "Laptop machine-0001-abcdefghijkl", "machine-0001…", "2 seats"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// TestActions: free, rename, offline activation, mail the key and reissue
// from the portal, each audited as the customer; a second reissue within
// the day is refused.
func TestActions(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		v := e.issue(t, e.org.ID, "photo", "ada@example.com")
		id := v.Licence.ID
		a := e.activate(t, *v.Key, "machine-a")
		b := e.activate(t, *v.Key, "machine-b")
		c := e.signIn(t, "acme", "ada@example.com")

		wantSeeOther(t, "rename", c.post(t, "/portal/acme/machines/"+a.ID+"/rename", url.Values{"label": {"Studio iMac"}}), "/portal/acme/?done=renamed")
		if got, _ := e.store.Activation(t.Context(), e.org.ID, a.ID); got.Label != "Studio iMac" {
			t.Errorf("label = %q, want Studio iMac", got.Label)
		}
		wantStatus(t, "rename to nothing", c.post(t, "/portal/acme/machines/"+a.ID+"/rename", url.Values{"label": {" "}}), http.StatusBadRequest)
		wantSeeOther(t, "free", c.post(t, "/portal/acme/machines/"+b.ID+"/free", url.Values{}), "/portal/acme/?done=freed")
		if got, _ := e.store.Activation(t.Context(), e.org.ID, b.ID); got.IsLive() {
			t.Errorf("machine b is still live")
		}

		file, _ := json.Marshal(sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: *v.Key, MachineID: "offline-1",
			Machine: sdk.Machine{Label: "Lab PC", OS: "windows", AppVersion: "2.0"}})
		up := c.upload(t, "/portal/acme/offline", file)
		wantStatus(t, "offline", up, http.StatusOK)
		var answer struct {
			Activation struct {
				MachineID string `json:"machine_id"`
			} `json:"activation"`
			Verdict string `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(up.body), &answer); err != nil || answer.Activation.MachineID != "offline-1" || answer.Verdict == "" ||
			!strings.Contains(up.header.Get("Content-Disposition"), "attachment") {
			t.Errorf("offline answer = %s (%v), want the activation and its verdict as a file", up.body, err)
		}

		wantSeeOther(t, "send key", c.post(t, "/portal/acme/licences/"+id+"/send-key", url.Values{}), "/portal/acme/?done=key-mailed")
		mails := e.send(t)
		if last := mails[len(mails)-1]; !strings.Contains(last.Text, *v.Key) || !strings.Contains(last.Text, baseURL+"/portal/acme/") {
			t.Errorf("the key mail does not hold the key and the portal link:\n%s", last.Text)
		}

		wantSeeOther(t, "reissue", c.post(t, "/portal/acme/licences/"+id+"/reissue", url.Values{}), "/portal/acme/?done=reissued")
		old, _ := e.store.Licence(t.Context(), e.org.ID, id)
		if old.ReplacedBy == nil || old.StatusReason == nil || *old.StatusReason != "reissued: "+"requested by the customer in the portal" {
			t.Fatalf("old licence = %+v, want replaced with the portal's reason", old)
		}
		_, err := e.act.Activate(t.Context(), activation.Activate{LicenceKey: v.Key, MachineID: ptr("machine-z"), Label: ptr("z"),
			OS: ptr("linux"), AppVersion: ptr("1")})
		if licentia.ErrorCode(err) != licentia.CodeLicenceRevoked {
			t.Errorf("activating with the old key: error = %v, want licence_revoked", err)
		}
		page := c.get(t, "/portal/acme/")
		if strings.Contains(page.body, *v.Key) || !strings.Contains(page.body, "Studio iMac") {
			t.Errorf("after the reissue the page shows the old key, or lost the machine:\n%s", page.body)
		}
		again := c.post(t, "/portal/acme/licences/"+*old.ReplacedBy+"/reissue", url.Values{})
		wantStatus(t, "second reissue within the day", again, http.StatusTooManyRequests)
		e.clock.Advance(24 * time.Hour)
		c = e.signIn(t, "acme", "ada@example.com") // the session lasted 12 hours
		wantSeeOther(t, "reissue a day later", c.post(t, "/portal/acme/licences/"+*old.ReplacedBy+"/reissue", url.Values{}), "/portal/acme/?done=reissued")

		es, err := e.store.LicenceAudit(t.Context(), e.org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		byCustomer := map[string]bool{}
		for _, en := range es {
			if en.Actor.Type == licentia.ActorCustomer {
				if en.Actor.ID != nil {
					t.Errorf("customer actor with an id: %+v", en.Actor)
				}
				byCustomer[en.Action] = true
			}
		}
		for _, action := range []string{licentia.AuditActivationRenamed, licentia.AuditActivationDeactivated, licentia.AuditActivationCreated,
			licentia.AuditLicenceKeyMailed, licentia.AuditLicenceReissued, licentia.AuditLicenceRevoked} {
			if !byCustomer[action] {
				t.Errorf("no %s audited as the customer: %v", action, byCustomer)
			}
		}
		evs, _ := e.store.OrganizationEvents(t.Context(), e.org.ID)
		seen := map[licentia.EventType]bool{}
		for _, ev := range evs {
			seen[ev.Type] = true
		}
		for _, typ := range []licentia.EventType{licentia.EventActivationDeactivated, licentia.EventActivationCreated, licentia.EventLicenceRevoked} {
			if !seen[typ] {
				t.Errorf("no %s event", typ)
			}
		}
	})
}

// TestOthersIDs: another customer's licence or machine, another
// organization's, and made-up ids, in every form of the portal, answer the
// same as absent and change nothing.
func TestOthersIDs(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	bob := e.issue(t, e.org.ID, "photo", "bob@example.com")
	bobMachine := e.activate(t, *bob.Key, "bob-1")
	beta := e.organization(t, "Beta", "beta")
	e.product(t, beta.ID, "betaapp")
	theirs := e.issue(t, beta.ID, "betaapp", "ada@example.com")
	theirMachine := e.activate(t, *theirs.Key, "ada-beta-1")
	c := e.signIn(t, "acme", "ada@example.com")

	absentLicence := c.post(t, "/portal/acme/licences/"+licentia.NewID()+"/send-key", url.Values{})
	absentMachine := c.post(t, "/portal/acme/machines/"+licentia.NewID()+"/free", url.Values{})
	wantStatus(t, "absent licence", absentLicence, http.StatusNotFound)
	wantStatus(t, "absent machine", absentMachine, http.StatusNotFound)
	for _, lid := range []string{bob.Licence.ID, theirs.Licence.ID, "not-an-id"} {
		for _, action := range []string{"send-key", "reissue"} {
			a := c.post(t, "/portal/acme/licences/"+lid+"/"+action, url.Values{})
			wantStatus(t, action+" "+lid, a, http.StatusNotFound)
			if !strings.Contains(a.body, "There is no such licence among yours.") {
				t.Errorf("%s %s does not answer as absent:\n%s", action, lid, a.body)
			}
		}
	}
	for _, mid := range []string{bobMachine.ID, theirMachine.ID} {
		for _, action := range []string{"free", "rename"} {
			a := c.post(t, "/portal/acme/machines/"+mid+"/"+action, url.Values{"label": {"Mine now"}})
			wantStatus(t, action+" "+mid, a, http.StatusNotFound)
			if !strings.Contains(a.body, "There is no such computer among yours.") {
				t.Errorf("%s %s does not answer as absent:\n%s", action, mid, a.body)
			}
		}
	}
	// Another customer's key in an offline request file.
	file, _ := json.Marshal(sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: *bob.Key, MachineID: "sneaky",
		Machine: sdk.Machine{Label: "x", OS: "x", AppVersion: "x"}})
	wantStatus(t, "offline with another's key", c.upload(t, "/portal/acme/offline", file), http.StatusNotFound)
	// The session of one organization is no session in another's portal.
	if a := c.get(t, "/portal/beta/"); strings.Contains(a.body, *theirs.Key) {
		t.Errorf("acme's session shows beta's licences")
	}
	wantSeeOther(t, "beta form with acme's session", c.post(t, "/portal/beta/licences/"+theirs.Licence.ID+"/reissue", url.Values{}), "/portal/beta/")

	for _, id := range []string{bobMachine.ID} {
		if got, _ := e.store.Activation(t.Context(), e.org.ID, id); !got.IsLive() || got.Label != "Laptop bob-1" {
			t.Errorf("another customer's machine changed: %+v", got)
		}
	}
	if got, _ := e.store.Activation(t.Context(), beta.ID, theirMachine.ID); !got.IsLive() {
		t.Errorf("another organization's machine was freed")
	}
	for _, l := range []*admin.LicenceView{bob, theirs} {
		if got, _ := e.store.Licence(t.Context(), l.Licence.OrgID, l.Licence.ID); got.ReplacedBy != nil {
			t.Errorf("licence %s was reissued", l.Licence.ID)
		}
	}
	if mails := e.send(t); len(mails) != 1 { // the sign-in link only
		t.Errorf("outbox holds %d mails, want only the sign-in link", len(mails))
	}
}

// TestActionRace: one customer's sessions racing on PostgreSQL: freeing
// one machine frees it once; reissuing one licence makes one new licence.
func TestActionRace(t *testing.T) {
	e := newEnv(t, envOptions{open: storetest.OpenPostgres})
	v := e.issue(t, e.org.ID, "photo", "ada@example.com")
	m := e.activate(t, *v.Key, "machine-a")
	var cs []*client
	for range 3 { // the most sign-in links an address gets in an hour
		cs = append(cs, e.signIn(t, "acme", "ada@example.com"))
	}
	race := func(path string) []answer {
		out := make([]answer, len(cs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range cs {
			wg.Go(func() {
				<-start
				out[i] = c.post(t, path, url.Values{})
			})
		}
		close(start)
		wg.Wait()
		return out
	}
	freed := 0
	for _, a := range race("/portal/acme/machines/" + m.ID + "/free") {
		if a.location() == "/portal/acme/?done=freed" {
			freed++
		}
	}
	if freed != 1 {
		t.Errorf("%d racers freed the machine, want 1", freed)
	}
	reissued := 0
	for _, a := range race("/portal/acme/licences/" + v.Licence.ID + "/reissue") {
		if a.location() == "/portal/acme/?done=reissued" {
			reissued++
		} else if a.status != http.StatusConflict && a.status != http.StatusNotFound {
			t.Errorf("a racer got %d:\n%s", a.status, a.body)
		}
	}
	ls, _ := e.admin.FindLicences(t.Context(), e.org.ID, adminFindEmail("ada@example.com"))
	if reissued != 1 || len(ls) != 2 {
		t.Errorf("%d racers reissued, %d licences; want 1 and 2", reissued, len(ls))
	}
	evs, _ := e.store.OrganizationEvents(t.Context(), e.org.ID)
	n := 0
	for _, ev := range evs {
		if ev.Type == licentia.EventActivationDeactivated {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d activation.deactivated events, want 1", n)
	}
}
