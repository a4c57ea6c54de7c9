package admin_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/store"
)

// tokenMail keeps the link of every invitation it is handed, by address.
type tokenMail struct {
	mu    sync.Mutex
	links map[string]string
	inner mail.Sender
}

func (m *tokenMail) Send(ctx context.Context, msg mail.Message) error {
	if err := m.inner.Send(ctx, msg); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links[msg.To] = joinToken.FindString(msg.Text)
	return nil
}

func (m *tokenMail) token(to string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.TrimPrefix(m.links[to], "/console/join/")
}

var joinToken = regexp.MustCompile(`/console/join/[0-9A-Za-z]{43}`)

// teamFixture is an organization on plan served by a Service that mails
// to an outbox and remembers each invitation's link.
func teamFixture(t *testing.T, st store.Store, plan licentia.PlanID) (*admin.Service, *licentia.Organization, admin.Acting, *tokenMail) {
	t.Helper()
	m := &tokenMail{links: map[string]string{}, inner: mail.NewOutbox(filepath.Join(t.TempDir(), "outbox"), "")}
	svc := admin.New(admin.Options{Store: st, Clock: clock.NewFake(time.Now().UTC()), Plans: licentia.DefaultPlans(),
		PublicURL: "https://licences.example", Mail: m, Logger: slog.New(slog.DiscardHandler)})
	o, err := svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Team", Slug: "team", Plan: plan, OwnerEmail: "owner@team.example"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.MemberByEmail(t.Context(), o.ID, "owner@team.example")
	if err != nil {
		t.Fatal(err)
	}
	return svc, o, admin.Acting{OrgID: o.ID, MemberID: owner.ID}, m
}

// Of invitations racing for the team's last place, exactly one wins; the
// others answer 402 and write nothing.
func TestInviteRaceForLastPlace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o, owner, _ := teamFixture(t, st, licentia.PlanIndie) // 3 places: the owner and 2
		if _, err := svc.Invite(t.Context(), owner, admin.Invitation("first@team.example", licentia.RoleViewer)); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = svc.Invite(t.Context(), owner, admin.Invitation(fmt.Sprintf("r%d@team.example", i), licentia.RoleViewer))
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case licentia.ErrorCode(err) != licentia.CodePlanLimitReached:
				t.Errorf("invitation %d: %v", i, err)
			}
		}
		invs, err := st.PendingInvitations(t.Context(), o.ID, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if won != 1 || len(invs) != 2 {
			t.Errorf("%d invitations won, %d pending; want 1 and 2", won, len(invs))
		}
	})
}

// Of requests racing to accept one invitation link, exactly one joins.
func TestJoinRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o, owner, m := teamFixture(t, st, licentia.PlanBusiness)
		if _, err := svc.Invite(t.Context(), owner, admin.Invitation("ada@team.example", licentia.RoleSupport)); err != nil {
			t.Fatal(err)
		}
		token := m.token("ada@team.example")
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, _, errs[i] = svc.UseLink(t.Context(), admin.LinkInvitation, token, "a long enough password")
			})
		}
		wg.Wait()
		joined := 0
		for i, err := range errs {
			switch code := licentia.ErrorCode(err); {
			case err == nil:
				joined++
			case code != licentia.CodeNotFound && code != licentia.CodeConflict:
				t.Errorf("join %d: %v", i, err)
			}
		}
		members, err := st.Members(t.Context(), o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if joined != 1 || len(members) != 2 {
			t.Errorf("%d joined, %d members; want 1 and 2", joined, len(members))
		}
	})
}

// Many members changing one team at once: invitations, role changes and
// removals by several admins. On PostgreSQL this is where a lock-order
// mistake would show as a deadlock; every answer must be a rule's.
func TestTeamChangesConcurrently(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o, owner, m := teamFixture(t, st, licentia.PlanBusiness)
		const admins = 6
		acting := make([]admin.Acting, admins)
		for i := range acting {
			email := fmt.Sprintf("admin%d@team.example", i)
			if _, err := svc.Invite(t.Context(), owner, admin.Invitation(email, licentia.RoleAdmin)); err != nil {
				t.Fatal(err)
			}
			_, mem, err := svc.UseLink(t.Context(), admin.LinkInvitation, m.token(email), "a long enough password")
			if err != nil {
				t.Fatal(err)
			}
			acting[i] = admin.Acting{OrgID: o.ID, MemberID: mem.ID}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		unexpected := map[string]int{}
		for i, a := range acting {
			wg.Go(func() {
				for j := range 6 {
					target := acting[(i+1+j%(admins-1))%admins].MemberID // never oneself
					var err error
					switch j % 3 {
					case 0:
						_, err = svc.Invite(t.Context(), a, admin.Invitation(fmt.Sprintf("g%d-%d@team.example", i, j), licentia.RoleViewer))
					case 1:
						_, err = svc.ChangeMemberRole(t.Context(), a, target, admin.Role(licentia.RoleDeveloper))
					case 2:
						err = svc.RemoveMember(t.Context(), a, target)
					}
					switch licentia.ErrorCode(err) {
					case licentia.CodeInsufficientRole, licentia.CodeUnauthorized, licentia.CodeMemberNotFound:
						// demoted, removed, or the target is gone: the rules
					default:
						if err == nil {
							continue
						}
						mu.Lock()
						unexpected[err.Error()]++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if len(unexpected) > 0 {
			t.Errorf("unexpected errors: %v", unexpected)
		}
		members, _ := st.Members(t.Context(), o.ID)
		invs, _ := st.PendingInvitations(t.Context(), o.ID, time.Now())
		if limit := licentia.DefaultPlans()[licentia.PlanBusiness].TeamPlaces; int64(len(members)+len(invs)) > limit {
			t.Errorf("%d members and %d invitations pass the %d places", len(members), len(invs), limit)
		}
		if !slices.ContainsFunc(members, func(m licentia.Member) bool { return m.ID == owner.MemberID && m.Role == licentia.RoleOwner }) {
			t.Errorf("the owner is no longer an owner: %+v", members)
		}
	})
}
