package providers

// EventsToEnable lists, per provider, the events to enable at the provider
// for the webhook address, as docs/providers.md gives them (a test keeps
// the two alike). Others are answered 200 and ignored.
var EventsToEnable = map[Name][]string{
	Stripe: {"checkout.session.completed", "checkout.session.async_payment_succeeded", "charge.refunded",
		"customer.subscription.deleted", "customer.subscription.updated"},
	Paddle:       {"transaction.completed", "adjustment.created", "adjustment.updated", "subscription.canceled", "subscription.activated"},
	LemonSqueezy: {"order_created", "order_refunded", "subscription_expired", "subscription_updated"},
}
