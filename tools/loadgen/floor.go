package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
)

// floorHandler is the least a status route can do: decode the same body,
// check one Ed25519 signature (the licence key's) and make one (the
// verdict's), and answer {"verdict": ...}.
func floorHandler() http.Handler {
	pub, priv, _ := ed25519.GenerateKey(nil)
	keyMsg := []byte("loadgen floor licence key payload")
	keySig := ed25519.Sign(priv, keyMsg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			LicenceKey string `json:"licence_key"`
			MachineID  string `json:"machine_id"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.LicenceKey == "" || in.MachineID == "" {
			http.Error(w, `{"error":{"code":"validation_failed"}}`, http.StatusUnprocessableEntity)
			return
		}
		if !ed25519.Verify(pub, keyMsg, keySig) {
			http.Error(w, `{"error":{"code":"invalid_licence_key"}}`, http.StatusUnprocessableEntity)
			return
		}
		payload, _ := json.Marshal(map[string]any{
			"licence_key": in.LicenceKey, "machine_id": in.MachineID, "issued_at": time.Now().UTC().Format(time.RFC3339),
		})
		sig := ed25519.Sign(priv, payload)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"verdict": base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(sig),
		})
	})
}

// startFloor serves floorHandler on a loopback port until ctx ends and
// returns its base URL.
func startFloor(ctx context.Context) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: floorHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}
