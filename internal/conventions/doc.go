// Package conventions holds no code: its tests keep rules that span the whole repository, such
// as "errors are matched with errors.Is and errors.As, never by their text".
package conventions
