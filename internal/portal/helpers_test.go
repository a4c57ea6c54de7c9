package portal_test

import "github.com/licentia/licentia/internal/admin"

func adminAnonymise() admin.Anonymise { return admin.Anonymise{Confirm: ptr(true)} }

func adminFindEmail(email string) admin.FindQuery { return admin.FindQuery{Email: &email} }
